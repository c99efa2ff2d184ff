#!/bin/bash
# Session 24, call 5: is the 128 x 64 kernel's per-stage floor the accumulator chain? 128- and
# 256-pixel tiles (one and two m64 accumulator chains per consumer warpgroup), unsplit, b32 res5 fwd.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/g24.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
B=build/release
bench() { local tag=$1; shift; echo "== $tag" >> $L/bench.log
  env "$@" CONVGUARD_WGMMA_PLAN=1 timeout 60 $B/bench/gpu_bench --suite devbin/res5.txt --batch 32 --dtype bf16 --layout nhwc --direction fwd \
    --runs 30 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -vE '^\s*$' >> $L/bench.log; }
for r in 1 2; do
  for t in 128x64 256x64 128x128 256x128; do
    for ws in 0 1; do bench "r$r t$t ws$ws" CONVGUARD_WGMMA_WS=$ws CONVGUARD_WGMMA_TILE=$t CONVGUARD_WGMMA_SPLIT=1; done
  done
  bench "r$r t128x256 ws4" CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_SPLIT=1
done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
