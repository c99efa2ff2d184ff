#!/usr/bin/env bash
# Builds the committed HEAD in a brand-new minimal Debian 12 root, as a new user's machine would
# have it: apt, certificates, git and make, nothing else. The README's two commands then run there
# as written (`make probe`, then `make test`), so a package that a developer's machine has by hand,
# or that apt only Recommends, fails here instead of on a user's machine. CI runs this (.ci/run).
#
#   scripts/fresh-root-check.sh                    # make probe && make test in the fresh root
#   scripts/fresh-root-check.sh --cmd 'make probe' # any command, run in the fresh clone
#   scripts/fresh-root-check.sh --drop PKG         # remove PKG from install-deps.sh in the clone
#                                                  # first: shows the check fails when a needed
#                                                  # package goes missing (docs/dependencies.md)
# Needs root (mmdebstrap's root mode, chroot); installs mmdebstrap on first use. The root is made
# from the machine's own apt sources. No CUDA toolkit comes from Debian, so the fresh root builds
# the CPU backend and the stub GPU backend; the normal `make test` keeps compiling the CUDA code.
# Exit status: the command's; on failure the log's tail is printed. Log: $FRESH_ROOT_DIR/log.
set -uo pipefail

cmd="make probe && make test"
drop=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cmd) cmd=${2:?--cmd needs a command}; shift 2 ;;
    --drop) drop=${2:?--drop needs a package name}; shift 2 ;;
    *) echo "fresh-root-check: unknown argument '$1' (expected --cmd CMD or --drop PKG)" >&2; exit 2 ;;
  esac
done

top=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 2
if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-root-check: needs root (mmdebstrap and chroot); run it as root" >&2
  exit 2
fi
if ! command -v mmdebstrap >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null \
    || { echo "fresh-root-check: could not install mmdebstrap" >&2; exit 2; }
fi

dir=${FRESH_ROOT_DIR:-/tmp/convguard-fresh-root}
root=$dir/root
log=$dir/log
cleanup() {
  # Anything the command left running inside the root goes with it.
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && kill -9 "$pid" 2>/dev/null
  done
  for m in dev/shm proc; do mountpoint -q "$root/$m" && umount -l "$root/$m"; done
}
cleanup
rm -rf "$dir" && mkdir -p "$dir"
trap cleanup EXIT

start=$(date +%s)
sources=(/etc/apt/sources.list.d/*.sources)
echo "fresh-root-check: creating a minimal Debian 12 root in $root" >&2
if [ -e "${sources[0]}" ]; then
  mmdebstrap --variant=apt --include=ca-certificates,git,make bookworm "$root" - <"${sources[0]}" >"$log" 2>&1
else
  mmdebstrap --variant=apt --include=ca-certificates,git,make bookworm "$root" >"$log" 2>&1
fi || { tail -20 "$log"; echo "fresh-root-check: mmdebstrap failed (log: $log)" >&2; exit 2; }

git clone -q "$top" "$root/src/convguard" || exit 2
head=$(git -C "$top" log -1 --format=%h)
if [ -n "$drop" ]; then
  grep -qE "(^|[[:space:]])$drop([[:space:]]|\$)" "$root/src/convguard/scripts/install-deps.sh" \
    || { echo "fresh-root-check: '$drop' is not in scripts/install-deps.sh" >&2; exit 2; }
  sed -i -E "s/(^|[[:space:](])$drop([[:space:])]|\$)/\1\2/" "$root/src/convguard/scripts/install-deps.sh"
  echo "fresh-root-check: dropped '$drop' from install-deps.sh in the fresh clone" | tee -a "$log" >&2
fi
mount -t proc proc "$root/proc"
mkdir -p "$root/dev/shm" && mount -t tmpfs -o size=2g tmpfs "$root/dev/shm"

echo "fresh-root-check: running '$cmd' in a fresh clone of $head" >&2
# A new user's environment: none of this machine's variables (CONVGUARD_DB, CUDA paths, ...).
chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 bash -c "cd /src/convguard && $cmd" >>"$log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
if [ $rc -ne 0 ]; then
  echo "----- last 60 lines of $log -----"
  tail -60 "$log"
  echo "fresh-root-check: FAILED: '$cmd' exited $rc in a fresh Debian 12 root at $head (${secs} s; log: $log)"
else
  tail -8 "$log"
  echo "fresh-root-check: ok: '$cmd' succeeded in a fresh Debian 12 root at $head (${secs} s; log: $log)"
fi
exit $rc
