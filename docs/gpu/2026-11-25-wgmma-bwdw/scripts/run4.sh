#!/usr/bin/env bash
# Call 4: the loader without divisions (a pixel row per thread, carried between stages): tests,
# sanitizers, the peer, and Nsight Compute on three layers.
set -u
D=devbin-wgbw
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
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
for i in 2 3; do
  timeout 60 ncu --clock-control none --kernel-name regex:'wgmma_bwd_weights|reduce_splits' --launch-skip 3 --launch-count 2 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
    $D/gpu_bench --suite $D/prof$i.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 2 \
    --only gpu:wgmma_bwd_weights > "$L/ncu$i.txt" 2>&1
  echo "ncu $i rc $?"; grep -E "^  [a-z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Issue Slots Busy|No Eligible|Stall" "$L/ncu$i.txt" | head -20
done
BUILD=$D PARTS="tests peer" DIRECTION=bwd_weights SUMMARY=$D/peer_summary.py TESTS_T=300 bash $D/gpu_wgmma.sh
