#!/bin/bash
# Session 24, call 2: Nsight Compute on res5[b-c]_branch2b b32 bf16 fwd: our 128 x 64 unsplit
# kernels (bulk copies ws 4; A multicast in clusters of 4, ws 7) against cuDNN 9.19's 128x64x64.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/g24.tar.xz
export CONVGUARD_DATA_DIR=$PWD/data
NCU=/usr/local/cuda/bin/ncu
PY=/opt/torch/.venv/bin/python3
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters --section ComputeWorkloadAnalysis"
B="build/release/bench/gpu_bench --suite devbin/r5b2b.txt --batch 32 --dtype bf16 --layout nhwc --direction fwd --calls 1 --runs 1 --only gpu:wgmma_implicit_gemm"
for ws in 4 7; do
  CONVGUARD_WGMMA_WS=$ws CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1 timeout 100 $NCU --clock-control none $SEC \
    -k regex:'wgmma' --launch-count 1 $B > $L/ncu_ws$ws.txt 2>&1; echo "ws$ws rc $?"
done
CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=1 timeout 100 $NCU --clock-control none $SEC \
    -k regex:'wgmma' --launch-count 1 $B > $L/ncu_ws4_t128.txt 2>&1; echo "ws4 t128 rc $?"
timeout 150 $NCU --clock-control none --profile-from-start off $SEC --launch-count 1 -k regex:'xmma|nvjet' \
  $PY devbin/ncu_res5.py > $L/ncu_cudnn.txt 2>&1; echo "cudnn rc $?"
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
