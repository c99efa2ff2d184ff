#!/bin/bash
# Session 24, call 4: A multicast with 9 stages at 128 x 64 (ws 6, 7) against the 4-stage unicast
# kernel (ws 4), the 8-stage persistent one (ws 5) and the plans, b32 res5 forward.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/g24.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
B=build/release
S0=$(date +%s)
SH='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.LargeLayersVerifyBySampling'
CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x64 timeout 100 $B/tests/gpu_tests --gtest_filter="$SH" 2>&1 | grep -vE "^\[ RUN|^$|^\[       OK" | tail -6 > $L/tests.log
bench() { local tag=$1; shift; echo "== $tag ($(( $(date +%s) - S0 ))s)" >> $L/bench.log
  env "$@" timeout 60 $B/bench/gpu_bench --suite devbin/res5.txt --batch 32 --dtype bf16 --layout nhwc --direction fwd \
    --runs 30 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -vE '^\s*$' >> $L/bench.log; }
F="CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1"
for r in 1 2 3; do
  bench "r$r plan"
  bench "r$r ws4" CONVGUARD_WGMMA_WS=4 $F
  bench "r$r ws5" CONVGUARD_WGMMA_WS=5 $F
  bench "r$r ws6" CONVGUARD_WGMMA_WS=6 $F
  bench "r$r ws7" CONVGUARD_WGMMA_WS=7 $F
done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
