#!/bin/bash
# Session 17, call 4 (H200): the final working tree's gpu_tests (the strided walk test with its
# 128-channel one-pixel-wide edge; comments only elsewhere): all tests, the strided test with the
# walk forced, memcheck over it.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}/s17d; mkdir -p $O
t() { echo "$(( $(date +%s) - S )) s"; }
G=db/tests/gpu_tests
timeout 150 $G > $O/gpu_tests_all.log 2>&1; echo "all tests rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/gpu_tests_all.log | head
CONVGUARD_WGMMA_PHASED=1 timeout 60 $G --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/strided_p1.log 2>&1; echo "strided P1 rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |Failure' $O/strided_p1.log | head -4
timeout 90 compute-sanitizer --tool memcheck --print-limit 5 $G --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; tail -2 $O/memcheck.log
echo "total $(t)"
