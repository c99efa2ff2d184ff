#!/usr/bin/env bash
# Call 1: SASS check, the new solver's tests first (stop on failure), then every GPU test and the
# peer on ResNet-50 b32 bf16 NHWC backward-weights.
set -u
D=devbin-wgbw
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
cuobjdump -sass $D/gpu_tests > /tmp/sass.txt 2>&1
{ awk '/Function :/{f = ($0 ~ /wgmma_bwd_weights/)} f && /HGMMA/{c++} END{print "HGMMA in the wgmma_bwd_weights kernels:", c+0}' /tmp/sass.txt
  awk '/Function :/{f = ($0 ~ /wgmma_bwd_weights/)} f && /HGMMA/' /tmp/sass.txt | head -4
  echo "HGMMA in the binary: $(grep -c HGMMA /tmp/sass.txt)"; } | tee "$L/sass.txt"
echo "=== quick"
( time timeout 150 $D/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.TensorCoreBackwardWeightsIsDeterministic' ) > "$L/quick.log" 2>&1
grep -vE "^\[ RUN|^$|^\[       OK" "$L/quick.log" | grep -E "verified|FAIL|PASSED|Failure|differ|real|rel|error" | head -30
if ! grep -q "PASSED" "$L/quick.log" || grep -q "FAILED" "$L/quick.log"; then
  grep -A3 "Failure" "$L/quick.log" | head -40
  tar czf "$OUT/logs.tgz" -C "$OUT" l; exit 1
fi
BUILD=$D PARTS="tests peer" DIRECTION=bwd_weights SUMMARY=$D/peer_summary.py TESTS_T=300 bash $D/gpu_wgmma.sh
