#!/bin/bash
# Session 22, call 4 (H200): compute-sanitizer memcheck and racecheck over the test that samples
# the narrow_pointwise layers (b32 res3[b-d]_branch2a, b256 res3a_branch2a as persistent 128 x 64
# tiles) with the wide splits and pixel ties; fae8344's build.
set -u
S=$(date +%s)
mkdir -p dn && tar -C dn -xJf devbin/bin22c.tar.xz
export LD_LIBRARY_PATH=$PWD/dn/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s22d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
F='*WideSplitsAndPixelTies*'
timeout 280 compute-sanitizer --tool memcheck dn/tests/gpu_tests --gtest_filter="$F" > $O/memcheck.log 2>&1
echo "memcheck rc $? $(t)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
timeout 280 compute-sanitizer --tool racecheck dn/tests/gpu_tests --gtest_filter="$F" > $O/racecheck.log 2>&1
echo "racecheck rc $? $(t)"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" $O/racecheck.log | tail -3
tar -C /tmp -cJf ${OUT:-out}/s22d.tar.xz s22d
