#!/bin/bash
# Session 24, call 3: A multicast on the plans' own tile-per-block bulk copies
# (CONVGUARD_WGMMA_MULTICAST=2|4), tests and ResNet-50 forward b32/b256 against the plans.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/g24.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
B=build/release
S0=$(date +%s)
SH='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaWideSplitsAndPixelTies:Gpu.LargeLayersVerifyBySampling'
t() { local name=$1; shift; echo "== $name: $* ($(( $(date +%s) - S0 ))s)" >> $L/tests.log; env "$@" timeout 100 $B/tests/gpu_tests --gtest_filter="$SH" 2>&1 | grep -vE "^\[ RUN|^$|^\[       OK" | tail -8 >> $L/tests.log; }
t mc4 CONVGUARD_WGMMA_MULTICAST=4
t ws7_t256 CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x256
bench() { local tag=$1 batch=$2; shift 2; echo "== $tag ($(( $(date +%s) - S0 ))s)" >> $L/bench.log
  env "$@" timeout 90 $B/bench/gpu_bench --suite data/suites/resnet50.txt --batch $batch --dtype bf16 --layout nhwc --direction fwd \
    --runs 30 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -vE '^\s*$' >> $L/bench.log; }
for r in 1 2; do
  bench "b32 r$r plan" 32 CONVGUARD_WGMMA_PLAN=1
  bench "b32 r$r mc4" 32 CONVGUARD_WGMMA_MULTICAST=4 CONVGUARD_WGMMA_PLAN=1
  bench "b32 r$r mc2" 32 CONVGUARD_WGMMA_MULTICAST=2
done
for r in 1 2; do
  bench "b256 r$r plan" 256 CONVGUARD_WGMMA_PLAN=1
  bench "b256 r$r mc4" 256 CONVGUARD_WGMMA_MULTICAST=4 CONVGUARD_WGMMA_PLAN=1
  bench "b256 r$r mc2" 256 CONVGUARD_WGMMA_MULTICAST=2
done
echo "done $(( $(date +%s) - S0 ))s" >> $L/tests.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
