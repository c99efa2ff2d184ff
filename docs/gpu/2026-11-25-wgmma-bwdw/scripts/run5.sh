#!/usr/bin/env bash
# Call 5: 32-pixel stages with two blocks per SM (CONVGUARD_WGMMA_BWDW_BK=32) against 64-pixel
# stages with one: both verified, both timed on ResNet-50 b32 bf16 NHWC backward-weights.
set -u
D=devbin-wgbw
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
F='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.TensorCoreBackwardWeightsIsDeterministic:Gpu.LargeLayers*'
for bk in 64 32; do
  echo "=== tests, BK $bk"
  CONVGUARD_WGMMA_BWDW_BK=$bk timeout 200 $D/gpu_tests --gtest_filter="$F" > "$L/tests_bk$bk.log" 2>&1
  echo "rc $?"; grep -E "wgmma_bwd_weights.*verified|PASSED|FAILED" "$L/tests_bk$bk.log"
done
for bk in 64 32 64 32; do
  CONVGUARD_WGMMA_BWDW_BK=$bk timeout 100 $D/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 \
    --layout nhwc --direction bwd_weights --runs 30 --only gpu:wgmma_bwd_weights,gpu:tc_bwd_weights \
    --json "$L/var_bk$bk.$RANDOM.jsonl" > /dev/null 2>&1
  echo "bench BK $bk rc $?"
done
VSOLVERS="gpu:wgmma_bwd_weights gpu:tc_bwd_weights" python3 $D/variant_summary.py "$L"/var_*.jsonl | tee "$L/variants.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" l
