#!/bin/bash
# Session 20, call 3 (H200): compute-sanitizer memcheck and racecheck over the test that carries the
# ws-0 tie's new case (backward-data b256 res3[b-d]_branch2b as 256-pixel tiles, sampled against
# the reference), and the backward-data plan at b256 once more.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s20c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
res() { grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|ERROR SUMMARY|RACECHECK SUMMARY' $1 | head -8; }
NEW='Gpu.TensorCoreWgmmaWideSplitsAndPixelTies'
timeout 280 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter="$NEW" > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; res $O/memcheck.log
timeout 280 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter="$NEW" > $O/racecheck.log 2>&1; echo "racecheck rc $? $(t)"; res $O/racecheck.log
echo "total $(t)"
tar -C /tmp -cJf ${OUT:-out}/s20c.tar.xz s20c
