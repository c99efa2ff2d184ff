#!/usr/bin/env bash
# Call 2: the sabotaged build must fail; memcheck and racecheck over gpu:wgmma_bwd_weights' tests,
# racecheck over the wgmma backward-data tests; tile and split variants on ResNet-50 bwd-weights.
set -u
D=devbin-wgbw
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
echo "=== sabotage (the last split's partials dropped from the reduction)"
timeout 100 $D/gpu_tests_sabotage --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.LargeLayers*:Gpu.TensorCoreBackwardWeightsIsDeterministic' > /tmp/sab.log 2>&1
echo "rc $?"
{ grep -E "verified|FAILED|PASSED|OK \]" /tmp/sab.log; grep -m6 -A2 "wgmma_bwd_weights.*:" /tmp/sab.log | cut -c1-400; } | tee "$L/sabotage.log" | tail -25
for tool in memcheck racecheck; do
  echo "=== $tool (gpu:wgmma_bwd_weights)"
  ( time timeout 150 compute-sanitizer --tool $tool --print-limit 5 $D/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.TensorCoreBackwardWeightsIsDeterministic' ) > "$L/bwdw_$tool.log" 2>&1
  echo "rc $?"; grep -E "SUMMARY|PASSED|FAILED|verified|real" "$L/bwdw_$tool.log"
done
echo "=== racecheck (gpu:wgmma_implicit_gemm backward-data)"
( time timeout 170 compute-sanitizer --tool racecheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataOnItsShapes' ) > "$L/bwdd_racecheck.log" 2>&1
echo "rc $?"; grep -E "SUMMARY|PASSED|FAILED|verified|real" "$L/bwdd_racecheck.log"
BUILD=$D PARTS=variants DIRECTION=bwd_weights VARIANTS="auto auto/1 auto/2 auto/4 auto/8 128x128 64x256" \
  VSUMMARY=$D/variant_summary.py bash $D/gpu_wgmma.sh 2>&1 | tail -30
