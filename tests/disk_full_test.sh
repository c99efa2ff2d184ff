#!/usr/bin/env bash
# A probe whose database's disk fills up (a small tmpfs): a clean error that says the disk is
# full, a non-zero exit, nothing lost that was recorded before, integrity ok, no row left running
# (the trial whose result did not fit is recorded interrupted: not evidence, run again), and once
# there is space the same command completes the sweep. Mounting needs root (CI runs as root) or
# an unprivileged user namespace; where neither is allowed the test is skipped (exit 77).
# Usage: disk_full_test.sh path/to/convguard path/to/convguard_chaos.so
set -u
CG=$(realpath "$1")
CHAOS=$(realpath "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
MNT=$TMP/mnt
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=16m tmpfs "$MNT" 2>/dev/null; then
  # Not root: a private user and mount namespace may still mount a tmpfs.
  if [ -z "${CONVGUARD_IN_USERNS:-}" ] && unshare -rm true 2>/dev/null; then
    rm -rf "$TMP"
    CONVGUARD_IN_USERNS=1 exec unshare -rm "$0" "$@"
  fi
  echo "SKIP: cannot mount a tmpfs here (needs root, or unprivileged user namespaces)"
  rm -rf "$TMP"
  exit 77
fi
trap 'umount "$MNT" 2>/dev/null; rm -rf "$TMP"' EXIT
source "$HERE/check_lib.sh"
state() { python3 "$HERE/db_state.py" "$CG" "$@"; }

# Fast trials only (a crash restarts the worker, ~1 s here); chaos:error's row carries a message.
SOLVERS='chaos:good,chaos:wrong,chaos:error'
PLANTED='chaos:good=ok,chaos:wrong=wrong,chaos:error=error'
for i in $(seq 5 44); do echo "mb1ic3ih${i}oc4kh3ph1"; done >"$TMP/suite.txt"
probe() {  # probe DB ARGS...: the sweep, its --json lines in $TMP/out.jsonl, stderr in $TMP/err
  "$CG" probe --db "$1" --plugin "$CHAOS" --solvers "$SOLVERS" --json "${@:2}" \
    >"$TMP/out.jsonl" 2>"$TMP/err"
}

# Sizes from "full after a few trials" to "full after a few dozen": where the disk fills, at a
# trial's start (its running row) or at its end (its result), depends on SQLite's pages and
# varies from run to run; sizes are tried until both have happened (and at least three).
at_start=0
at_end=0
rounds=0
for size in $(seq 320 64 1280); do
  size=${size}k
  [ "$rounds" -ge 3 ] && [ "$at_start" -gt 0 ] && [ "$at_end" -gt 0 ] && break
  rounds=$((rounds + 1))
  # The disk is made small by a file that fills all but $size of it; deleting it gives the space
  # back (a remount would do it too, but not inside a user namespace).
  rm -rf "$MNT"/*
  fallocate -l $(($(df -k --output=avail "$MNT" | tail -1) - ${size%k}))K "$MNT/filler"
  mkdir "$MNT/db"
  DB=$MNT/db/t.db
  # Recorded before the disk fills: these must survive everything below.
  probe "$DB" --problem mb1ic1ih4oc1kh1
  check "$size: the first probe fits (rc $?)" test -s "$TMP/out.jsonl"
  state "$DB" --save "$TMP/before.json" >/dev/null
  probe "$DB" --suite "$TMP/suite.txt"
  rc=$?
  check "$size: the sweep fails (rc $rc)" test "$rc" -eq 1
  check "$size: the error says the disk is full and names the database" \
    grep -q "$DB: the disk is full (.*free space there or give another --db" "$TMP/err"
  check "$size: nothing recorded before is lost, every reported trial is there, none running" \
    state "$DB" --before "$TMP/before.json" --reported "$TMP/out.jsonl" --running-max 0
  if grep -q "its result (.*) could not be recorded" "$TMP/err"; then
    at_end=$((at_end + 1))
    check "$size: the trial whose result did not fit is interrupted (not evidence)" sh -c \
      "'$CG' db show --db '$DB' --json | grep '\"status\":\"interrupted\"' | grep -q 'could not be recorded'"
  elif grep -q "not started, its row could not be written" "$TMP/err"; then
    at_start=$((at_start + 1))
  fi
  # The same small disk again (closing the database gave some space back): fails cleanly too.
  state "$DB" --save "$TMP/full.json" >/dev/null
  probe "$DB" --suite "$TMP/suite.txt"
  rc=$?
  check "$size: a second probe on the small disk fails cleanly (rc $rc)" \
    sh -c "test $rc -ne 0 && grep -q 'the disk is full' '$TMP/err'"
  check "$size: and loses nothing" state "$DB" --before "$TMP/full.json" --running-max 0
  # Space again: the same command completes the sweep, every trial its planted status.
  rm "$MNT/filler"
  probe "$DB" --problem mb1ic1ih4oc1kh1 --suite "$TMP/suite.txt"
  rc=$?
  check "$size: with space, the rerun completes (rc $rc)" test "$rc" -eq 0
  check "$size: every row has its planted status" \
    state "$DB" --before "$TMP/full.json" --final "$PLANTED"
done
echo "$rounds sizes: the disk filled at a trial's start $at_start time(s), at its end $at_end time(s)"
check "both places were hit (a start and an end)" test "$at_start" -gt 0 -a "$at_end" -gt 0
finish
