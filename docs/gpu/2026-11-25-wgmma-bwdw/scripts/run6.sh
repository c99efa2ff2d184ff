#!/usr/bin/env bash
# Call 6 (final binaries): tests, sanitizers, the peer.
# sanitizers, the peer, and Nsight Compute on three layers.
set -u
D=devbin-wgbw
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
cuobjdump -sass $D/gpu_tests > /tmp/sass.txt 2>&1
{ awk '/Function :/{f = ($0 ~ /wgmma_bwd_weights/)} f && /HGMMA/{c++} END{print "HGMMA in the wgmma_bwd_weights kernels:", c+0}' /tmp/sass.txt
  awk '/Function :/{f = ($0 ~ /wgmma_bwd_weights/)} f && /HGMMA/' /tmp/sass.txt | sed 's/^.*HGMMA/HGMMA/; s/ *;.*//' | sort | uniq -c | head -4; } | tee "$L/sass.txt"
echo "=== quick"
( time timeout 150 $D/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.TensorCoreBackwardWeightsIsDeterministic' ) > "$L/quick.log" 2>&1
grep -E "verified|PASSED|FAILED|real" "$L/quick.log"
if ! grep -q "PASSED" "$L/quick.log" || grep -q "FAILED" "$L/quick.log"; then
  grep -B2 -A3 "Failure" "$L/quick.log" | head -40; tar czf "$OUT/logs.tgz" -C "$OUT" l; exit 1
fi
for tool in memcheck racecheck; do
  echo "=== $tool"
  ( time timeout 150 compute-sanitizer --tool $tool --print-limit 5 $D/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.TensorCoreBackwardWeightsIsDeterministic' ) > "$L/bwdw_$tool.log" 2>&1
  echo "rc $?"; grep -E "SUMMARY|PASSED|FAILED|real" "$L/bwdw_$tool.log"
done
BUILD=$D PARTS="tests peer" DIRECTION=bwd_weights SUMMARY=$D/peer_summary.py TESTS_T=300 bash $D/gpu_wgmma.sh
