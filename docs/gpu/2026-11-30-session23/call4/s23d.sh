#!/bin/bash
# Session 23 call 4 (H200): where the b32 res5 forward layers (0.78-0.83x of the peer) lose, under
# Nsight Compute: own wgmma kernels (gpu_bench, one round) and cuDNN 9.19's through PyTorch 2.11.
set -u
S=$(date +%s); t() { echo "$(( $(date +%s) - S )) s"; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/g23.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
B="/tmp/g/gpu_bench --suite devbin/res5.txt --batch 32 --dtype bf16 --layout nhwc --direction fwd --calls 1"
CONVGUARD_WGMMA_PLAN=1 timeout 60 $B --runs 3 --only 'gpu:wgmma_*' > $OUT/plans_times.txt 2>&1; echo "plans rc $? $(t)"
for i in 1 2 3 4; do
  sed -n "${i}p" devbin/res5.txt > /tmp/one.txt
  timeout 40 $NCU --clock-control none $SEC -k regex:'wgmma|reduce' --launch-count 2 \
    ${B/devbin\/res5.txt/\/tmp\/one.txt} --runs 1 --only 'gpu:wgmma_*' >> $OUT/ncu_own.txt 2>&1; echo "ncu own $i rc $? $(t)"
done
timeout 150 $NCU --clock-control none --profile-from-start off $SEC --launch-count 16 \
  $PY devbin/ncu_res5.py > $OUT/ncu_cudnn.txt 2>&1; echo "ncu cudnn rc $? $(t)"
grep -E "^  [a-zA-Z_].*\(|Duration|Registers Per|Waves Per SM|Grid Size|Block Size|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|Dynamic Shared" $OUT/ncu_own.txt | head -60
echo ===; grep -E "^res5|^  [a-zA-Z_].*\(|Duration|Registers Per|Waves Per SM|Grid Size|Block Size|Compute \(SM\) Throughput|Dynamic Shared" $OUT/ncu_cudnn.txt | head -80
