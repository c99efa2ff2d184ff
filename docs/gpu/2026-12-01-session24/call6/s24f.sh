#!/bin/bash
# Session 24, call 6: two stages' wgmma groups in flight per consumer (wait_group 2, build B)
# against one (wait_group 1, build A): tests on B, then interleaved b32/b256 forward timings.
set -u
L=$OUT/logs; mkdir -p $L /tmp/A /tmp/B
tar xJf devbin/g24a.tar.xz -C /tmp/A; tar xJf devbin/g24b.tar.xz -C /tmp/B
export CONVGUARD_DATA_DIR=$PWD/data
S0=$(date +%s)
SH='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
for ws in plan 4 5; do
  echo "== B tests ws $ws ($(( $(date +%s) - S0 ))s)" >> $L/tests.log
  if [ $ws = plan ]; then E=; else E="CONVGUARD_WGMMA_WS=$ws"; fi
  env $E timeout 100 /tmp/B/build/release/tests/gpu_tests --gtest_filter="$SH" 2>&1 | grep -vE "^\[ RUN|^$|^\[       OK" | tail -5 >> $L/tests.log
done
bench() { local tag=$1 bin=$2 suite=$3 batch=$4; shift 4; echo "== $tag ($(( $(date +%s) - S0 ))s)" >> $L/bench.log
  env "$@" timeout 90 /tmp/$bin/build/release/bench/gpu_bench --suite $suite --batch $batch --dtype bf16 --layout nhwc --direction fwd \
    --runs 30 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -vE '^\s*$' >> $L/bench.log; }
F="CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1"
for r in 1 2; do
  for b in A B; do
    bench "r$r $b ws5_64" $b devbin/res5.txt 32 CONVGUARD_WGMMA_WS=5 $F
    bench "r$r $b ws7_64" $b devbin/res5.txt 32 CONVGUARD_WGMMA_WS=7 $F
    bench "r$r $b ws5_128" $b devbin/res5.txt 32 CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=1
  done
done
for r in 1 2; do for b in A B; do bench "r$r $b b32" $b data/suites/resnet50.txt 32; done; done
for r in 1 2; do for b in A B; do bench "r$r $b b256" $b data/suites/resnet50.txt 256; done; done
echo "done $(( $(date +%s) - S0 ))s" >> $L/tests.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
