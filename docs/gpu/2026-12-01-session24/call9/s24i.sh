#!/bin/bash
# Session 24: the producers' stage positions by carries (wg::TapCursor, wg::PixelCursor) instead
# of run-time divisions: tests (plans and forced loaders), memcheck, and old (HEAD 1ef37a3) against
# new interleaved on ResNet-50 b32 in all three directions and b256 forward; the microbenchmark.
set -u
L=$OUT/logs; mkdir -p $L /tmp/old
tar xJf devbin/gn.tar.xz; tar xJf devbin/gb.tar.xz -C /tmp/old
export CONVGUARD_DATA_DIR=$PWD/data
S0=$(date +%s)
left() { local e=$(( $(date +%s) - S0 )); [ $e -lt $1 ] || { echo "skipped at ${e}s: $2" >> $L/skipped.log; return 1; }; }
T=build/release/tests/gpu_tests
t() { local name=$1 filter=$2; shift 2; left 330 "$name" || return; echo "== $name ($(( $(date +%s) - S0 ))s)" >> $L/tests.log
  env "$@" timeout 150 $T --gtest_filter="$filter" 2>&1 | grep -vE "^\[ RUN|^$|^\[       OK" | tail -6 >> $L/tests.log; }
bench() { local tag=$1 bin=$2 dir=$3 batch=$4; left 420 "$tag" || return; echo "== $tag ($(( $(date +%s) - S0 ))s)" >> $L/bench.log
  timeout 60 $bin --suite data/suites/resnet50.txt --batch $batch --dtype bf16 --layout nhwc --direction $dir \
    --runs 20 --calls 1 --only gpu:wgmma_implicit_gemm,gpu:wgmma_bwd_weights 2>&1 | grep -E "GFLOP|gpu:wgmma" >> $L/bench.log; }
NEW=build/release/bench/gpu_bench; OLD=/tmp/old/build/release/bench/gpu_bench
t all 'Gpu.TensorCoreWgmma*:Gpu.WgmmaBackward*:Gpu.LargeLayersVerifyBySampling'
for d in fwd bwd_data bwd_weights; do bench "r1 old $d" $OLD $d 32; bench "r1 new $d" $NEW $d 32; done
SH='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaPixelWideTiles'
t ws4 "$SH" CONVGUARD_WGMMA_WS=4
t ws5 "$SH" CONVGUARD_WGMMA_WS=5
t phased1 "$SH" CONVGUARD_WGMMA_PHASED=1
t pixels96 "$SH" CONVGUARD_WGMMA_PIXELS=96
t bwdw_tma1 'Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*' CONVGUARD_WGMMA_BWDW_TMA=1
left 300 memcheck && { echo "== memcheck" >> $L/sanitizer.log; timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $T \
  --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopyLoads:Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies:Gpu.TensorCoreWgmmaPixelWideTiles' 2>&1 | tail -3 >> $L/sanitizer.log; }
for d in fwd bwd_data bwd_weights; do bench "r2 new $d" $NEW $d 32; bench "r2 old $d" $OLD $d 32; done
bench "r1 old fwd256" $OLD fwd 256; bench "r1 new fwd256" $NEW fwd 256
./devbin/wgmma_floor 288 2>&1 | grep -E "im2col|divide" > $L/floor.log
echo "done at $(( $(date +%s) - S0 ))s" >> $L/skipped.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
