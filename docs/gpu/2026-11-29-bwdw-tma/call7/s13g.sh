#!/bin/bash
# Session 13, call 7 (H200): after the stage barriers' initialisation became one function
# (tma::init_stage_barriers, the pixel-wide and backward-weights bulk-copy kernels): gpu_tests,
# the backward-weights tests with 192 and 256 forced, pixel-wide widths forced, and the chosen
# plans timed once.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13g; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
for e in CONVGUARD_WGMMA_BWDW_BN=192 CONVGUARD_WGMMA_BWDW_BN=256; do
  env $e timeout 90 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*' > $O/bwdw_$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; done
for px in 96 192; do CONVGUARD_WGMMA_PIXELS=$px timeout 90 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaPixelWideTiles:Gpu.TensorCoreWgmmaBulkCopy*' > $O/pixels_$px.log 2>&1
  echo "pixels $px: $(grep -E '^\[  (PASSED|FAILED)' $O/pixels_$px.log | tr '\n' ' ')"; done
timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 30 --only gpu:wgmma_bwd_weights > $O/w32.log 2>&1
grep -E "wgmma_bwd" $O/w32.log | head -3
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13g.tgz s13g
