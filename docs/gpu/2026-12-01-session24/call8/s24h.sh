#!/bin/bash
# Session 24: the 128 x 64 bulk-copy kernel (mode 4, unsplit) on one tile and on 104 tiles of
# 72 and 288 stages (8 x 16 output images: 128 pixels each), against the microbenchmark.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/gb.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
for r in 1 2; do
  echo "== r$r" >> $L/bench.log
  CONVGUARD_WGMMA_PLAN=1 CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1 timeout 60 build/release/bench/gpu_bench --suite devbin/one.txt \
    --batch 0 --dtype bf16 --layout nhwc --direction fwd --runs 30 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -E "stages|gpu:wgmma|plan|rror|usage" >> $L/bench.log
done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
