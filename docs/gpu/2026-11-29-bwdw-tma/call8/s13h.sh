#!/bin/bash
# Session 13, call 8 (H200): after the review (warp 0 reconverged before the epilogue, the
# cp.async 32-pixel shape restored to ctest, comments): gpu_tests and the backward-weights tests
# with 128 forced and with the cp.async kernel forced.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13h; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
for e in CONVGUARD_WGMMA_BWDW_BN=128 CONVGUARD_WGMMA_BWDW_TMA=0; do
  env $e timeout 60 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*' > $O/bwdw_$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsOnItsShapes' 2>&1 | grep plan | tail -2
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13h.tgz s13h
