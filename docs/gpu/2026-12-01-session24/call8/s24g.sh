#!/bin/bash
# Session 24: fixed cost per tile against cost per stage of the 128 x 64 bulk-copy kernel (mode 4,
# unsplit) on res5-shaped 3x3 layers of 18-288 stages, and the microbenchmark at the same counts.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/gb.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
for r in 1 2; do
  for t in 128x64 128x256; do
    echo "== r$r ws4 $t s1" >> $L/bench.log
    CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=$t CONVGUARD_WGMMA_SPLIT=1 timeout 60 build/release/bench/gpu_bench --suite devbin/stages.txt \
      --batch 32 --dtype bf16 --layout nhwc --direction fwd --runs 30 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -E "stages|gpu:wgmma" >> $L/bench.log
  done
done
for n in 18 72 144 288; do ./devbin/wgmma_floor $n 2>&1 | grep -E "im2col" | sed "s/^/$n: /" >> $L/floor.log; done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
