#!/bin/bash
# Session 18, call 6 (H200): after the last read (WgPlan::bulk_stores counts tiles an SM with waves()):
# the wgmma tests, the plans' bulk stores printed again.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
timeout 120 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmma*' 2>&1 | grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' | head
for b in 32 256; do
  CONVGUARD_WGMMA_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction fwd --runs 1 --only gpu:wgmma_implicit_gemm > /tmp/plan_$b.log 2>&1
  echo "fwd b$b: $(grep -c 'bulk stores' /tmp/plan_$b.log) with bulk stores, $(grep -c 'loaders 5' /tmp/plan_$b.log) on loaders 5"
done
