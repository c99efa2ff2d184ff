#!/bin/bash
# Session 13, call 6 (H200): the final binaries' tests, default and with each tile width and
# loader forced; memcheck over the bulk-copy test's default plans, racecheck with 256-wide tiles.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13f; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for e in CONVGUARD_WGMMA_BWDW_BN=128 CONVGUARD_WGMMA_BWDW_BN=192 CONVGUARD_WGMMA_BWDW_BN=256 CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_TMA=1; do
  env $e timeout 90 db/tests/gpu_tests --gtest_filter="$B:Gpu.LargeLayersVerifyBySampling" > $O/bwdw_$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*' > $O/memcheck.log 2>&1; tail -2 $O/memcheck.log
CONVGUARD_WGMMA_BWDW_BN=256 timeout 120 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/racecheck_bn256.log 2>&1; tail -2 $O/racecheck_bn256.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13f.tgz s13f
