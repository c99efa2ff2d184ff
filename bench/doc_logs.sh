#!/usr/bin/env bash
# Writes the raw logs behind the CPU figures of docs/perf.md, docs/probe.md and docs/miopen.md into
# DIR (default docs/perf/<date>-<commit>/): the machine (lscpu's model and flags, the commit), the
# benchmark against oneDNN on the ResNet-50 and standard suites (three directions, f32 and bf16), the
# wall time of `make probe`'s sweep (the standard suite, forward, with the oneDNN plugin when built)
# and of the three-direction sweep into fresh databases, and
# the simulated-MIOpen probe of tests/miopen_test.sh (the standard suite, three directions).
# Run it on a quiet machine: nothing else may use the cores while it runs.
#   bash bench/doc_logs.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release
dir=${1:-docs/perf/$(date -u +%F)-$(git rev-parse --short HEAD)}
mkdir -p "$dir"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench tools include || echo ' (with uncommitted changes)')"
  echo "OPENBLAS_CORETYPE in the environment: ${OPENBLAS_CORETYPE:-unset (convguard sets SkylakeX on AVX-512 CPUs)}"
  echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|L2|L3|Flags)'
} >"$dir/machine.txt"
run() {  # run NAME CMD...: the command line, then its output, into DIR/NAME.log
  local name=$1; shift
  { echo "\$ $*"; "$@"; } >"$dir/$name.log" 2>&1
}
run cpu_bench_resnet50 "$bin/bench/convguard_bench" --suite data/suites/resnet50.txt --reps 5
run cpu_bench_standard "$bin/bench/convguard_bench" --suite data/suites/standard.txt --reps 3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
timed() {  # timed NAME CMD...: like run, with the wall time appended
  local name=$1; shift
  local t0; t0=$(date +%s%N)
  run "$name" "$@" || true
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf 'wall: %d.%03d s\n' $((ms / 1000)) $((ms % 1000)) >>"$dir/$name.log"
}
# `make probe` loads the oneDNN plugin when it was built; the sweeps here do too, and the forward
# one also runs without it (convguard's own solvers alone).
onednn=()
if [ -f "$bin/convguard_onednn.so" ]; then onednn=(--plugin "$bin/convguard_onednn.so"); fi
timed probe_standard_fwd env CONVGUARD_DB="$tmp/fwd.db" "$bin/convguard" probe --suite standard \
  "${onednn[@]}"
timed probe_standard_fwd_own env CONVGUARD_DB="$tmp/fwd_own.db" "$bin/convguard" probe --suite standard
timed probe_standard_3dir env CONVGUARD_DB="$tmp/3dir.db" "$bin/convguard" probe --suite standard \
  --directions fwd,bwd_data,bwd_weights "${onednn[@]}"
timed probe_standard_3dir_jobs2 env CONVGUARD_DB="$tmp/jobs2.db" "$bin/convguard" probe --suite standard \
  --directions fwd,bwd_data,bwd_weights --jobs 2 "${onednn[@]}"
# The sandbox's own costs: 200 trials of 1x1 problems in a reused worker, and 50 crashes (each a
# fresh worker).
# (awk reads all its input: `head` closing the pipe early killed the loop with SIGPIPE, which
# pipefail made fatal, and the script ended here with no error message.)
for h in $(seq 4 10); do for w in $(seq 5 33); do echo "mb1ic1ih${h}iw${w}oc1kh1kw1"; done; done |
  awk 'NR <= 200' >"$tmp/tiny.txt"
awk 'NR <= 50' "$tmp/tiny.txt" >"$tmp/tiny50.txt"
timed probe_overhead_200_trials env CONVGUARD_DB="$tmp/ov.db" "$bin/convguard" probe --suite "$tmp/tiny.txt" \
  --solvers cpu:direct
timed probe_overhead_50_crashes env CONVGUARD_DB="$tmp/cr.db" "$bin/convguard" probe --suite "$tmp/tiny50.txt" \
  --solvers chaos:segfault --plugin "$bin/convguard_chaos.so" --workarounds off
CONVGUARD_LOG_DIR=$(readlink -f "$dir") bash tests/miopen_test.sh "$bin/convguard" \
  "$bin/convguard_miopen.so" "$bin/tests/libfake_miopen.so" >"$dir/miopen_test.out" 2>&1 || true
echo "doc_logs: wrote $dir" >&2
