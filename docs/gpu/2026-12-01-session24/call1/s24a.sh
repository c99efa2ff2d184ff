#!/bin/bash
# Session 24, call 1: the A-multicast bulk-copy kernel (ws 6, 7): tests forced, sanitizers, bench.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/g24.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
B=build/release
S0=$(date +%s)
left() { local e=$(( $(date +%s) - S0 )); [ $e -lt ${1:-500} ] || { echo "skipped (at ${e}s): $2" >> $L/skipped.log; return 1; }; }
nvidia-smi -L > $L/gpu.txt 2>&1
SH='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaWideSplitsAndPixelTies:Gpu.LargeLayersVerifyBySampling'
t() { local name=$1; shift; left 480 "$name" || return; echo "== $name: $* ($(( $(date +%s) - S0 ))s)" >> $L/tests.log; env "$@" timeout 100 $B/tests/gpu_tests --gtest_filter="$SH" 2>&1 | grep -vE "^\[ RUN|^$|^\[       OK" | tail -12 >> $L/tests.log; }
san() { left 470 "$1" || return; echo "== $1 ws7 128x64 ($(( $(date +%s) - S0 ))s)" >> $L/sanitizer.log
  CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x64 timeout 80 compute-sanitizer --tool $1 --print-limit 5 \
    $B/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes' 2>&1 | tail -4 >> $L/sanitizer.log; }
bench() { local tag=$1 suite=$2; shift 2; left 520 "$tag" || return; echo "== $tag ($(( $(date +%s) - S0 ))s)" >> $L/bench.log
  env "$@" timeout 60 $B/bench/gpu_bench --suite $suite --batch 32 --dtype bf16 --layout nhwc --direction fwd \
    --runs 20 --calls 1 --only gpu:wgmma_implicit_gemm 2>&1 | grep -vE '^\s*$' >> $L/bench.log; }
t ws7_t64 CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x64
round() {
  bench "r$1 plan" devbin/res5.txt CONVGUARD_WGMMA_PLAN=1
  bench "r$1 ws7 128x64 s1" devbin/res5.txt CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1
  bench "r$1 ws6 128x64 s1" devbin/res5.txt CONVGUARD_WGMMA_WS=6 CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1
  bench "r$1 ws4 128x64 s1" devbin/res5.txt CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1
  bench "r$1 ws7 128x128 s1" devbin/res5.txt CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=1
  bench "r$1 ws7 128x128 s2" devbin/res5.txt CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=2
}
round 1
t ws6 CONVGUARD_WGMMA_WS=6
san memcheck
san racecheck
bench "full plan" data/suites/resnet50.txt
bench "full ws7 128x64" data/suites/resnet50.txt CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x64
round 2
t ws7_t128_s3 CONVGUARD_WGMMA_WS=7 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=3
san synccheck
echo "done at $(( $(date +%s) - S0 ))s" >> $L/skipped.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
