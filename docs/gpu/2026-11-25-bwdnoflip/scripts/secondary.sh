#!/usr/bin/env bash
# Device call 3 (branch gpubf16, secondary): (0) the GPU tests on the branch's last binaries; (1) backward-data tile shapes and splits forced on
# the branch's binary (scripts/gpu_wgmma.sh PARTS=variants DIRECTION=bwd_data: the plan's tile_for
# was tuned on forward only); (2) Nsight Compute on res4[b-f]_branch2b and res3[b-d]_branch2b,
# forward and backward-data (the wgmma kernel's 4th launch: after gpu_bench's warm-up), sections
# that say whether shared memory or the tensor pipe bounds the consumer warpgroups.
set -u
D=devbin-bf16
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
for f in $D/*.gz $D/base/*.gz; do [[ -e $f ]] && gunzip -kf "$f"; done; chmod +x $D/gpu_* $D/base/gpu_* 2>/dev/null
L=$OUT/l; mkdir -p "$L"
# The branch's last binaries (the cluster variant's host helpers moved): all GPU tests, and the
# forward shapes with the cluster variant forced (CONVGUARD_WGMMA_WS=3).
( time timeout 120 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "PASSED|FAILED|real" "$L/gpu_tests.log"
CONVGUARD_WGMMA_WS=3 timeout 60 $D/gpu_tests --gtest_filter=Gpu.TensorCoreWgmmaOnItsShapes 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests_ws3.log"
echo "WS=3 rc $?: $(grep -E 'PASSED|FAILED' "$L/gpu_tests_ws3.log" | head -2 | tr '\n' ' ')"
BUILD=$D PARTS=variants DIRECTION=bwd_data VSOLVERS_ONLY=gpu:wgmma_implicit_gemm \
  VARIANTS="auto 128x64 128x128 256x128 128x256 256x64 auto/1 auto/2 128x128/2 auto" \
  bash scripts/gpu_wgmma.sh > "$L/variants_part.txt" 2>&1
mv "$L/variants.txt" "$L/variants_bwd_data.txt"; cat "$L/variants_bwd_data.txt"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
M=smsp__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_ldgsts.sum
for layer in res4 res3; do
  grep -h "${layer}\[b-.\]_branch2b" data/suites/resnet50.txt > "$L/$layer.txt"
  for dir in fwd bwd_data; do
    n=ncu_${layer}_$dir
    timeout 120 ncu --clock-control none -k regex:wgmma_forward --launch-skip 3 --launch-count 1 $S \
      --metrics $M -o "$L/$n" $D/gpu_bench --suite "$L/$layer.txt" --batch 32 --dtype bf16 \
      --layout nhwc --direction $dir --runs 1 --only gpu:wgmma_implicit_gemm > "$L/${n}_run.log" 2>&1
    echo "$n rc $?"
    ncu -i "$L/$n.ncu-rep" --page details > "$L/$n.txt" 2>&1
    grep -E "^  [a-z_]|Duration|Compute \(SM\) Throughput|Memory Throughput|Shared|hmma|No Eligible|Issued Warp|Registers|Block Limit" "$L/$n.txt" | head -24
  done
done
tar czf "$OUT/logs.tgz" -C "$OUT" l
