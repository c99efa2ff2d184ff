#!/bin/bash
# Session 19, call 14 (H200): after the last read (test helpers plan_of / plan_forced_outside shared,
# no behaviour change): gpu_tests, and the new test under a forced loader (its plan checks skipped).
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}; mkdir -p $O
timeout 150 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $?"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]' $O/tests_all.log
CONVGUARD_WGMMA_WS=4 timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaWideSplitsAndPixelTies:Gpu.TensorCoreWgmmaBulkCopyStores' > $O/tests_W4.log 2>&1; echo "W4 rc $?"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]' $O/tests_W4.log
