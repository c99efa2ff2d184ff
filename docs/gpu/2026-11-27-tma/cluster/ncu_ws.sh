#!/bin/bash
# Device run: the plain kernel against the warp-specialised ones (1 plain, 2 persistent, 3 a
# cluster of 2 with the filter tile multicast by TMA) under Nsight Compute: L2 bytes, SM cycles
# and the warps' stall reasons, to say why the cluster variant is slower.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
NHWC='--dt=bf16 --stag=axb --wtag=axb --dtag=axb'
for p in "mb32ic256ih14oc256oh14kh3ph1" "mb32ic512ih28oc128oh28kh1"; do
  tag=$(echo "$p" | tr -c 'a-z0-9\n' '_')
  for ws in 0 1 3; do
    echo "=== $p WS=$ws"
    CONVGUARD_WGMMA_SK=0 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_WS=$ws timeout 60 db/convguard driver --device cuda:0 \
      -S gpu:wgmma_implicit_gemm --problem "$NHWC $p" -t 1 -i 50 2>&1 | tail -1
    CONVGUARD_WGMMA_SK=0 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_WS=$ws timeout 120 ncu --kernel-name regex:wgmma_forward --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --page raw \
      db/convguard driver --device cuda:0 -S gpu:wgmma_implicit_gemm --problem "$NHWC $p" -t 1 -i 6 \
      > $L/ncu_${tag}_ws$ws.log 2>&1
    grep -E " gpu__time_duration.sum|lts__t_bytes.sum |sm__cycles_active.avg |sm__cycles_active.max|lts__throughput.avg.pct_of_peak_sustained_elapsed|launch__registers_per_thread |launch__grid_size|launch__cluster" $L/ncu_${tag}_ws$ws.log | head -12
    grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio" $L/ncu_${tag}_ws$ws.log | sort -k3 -n -r | head -6
  done
done
tar -C $L -czf $OUT/ncu_ws_logs.tgz .
