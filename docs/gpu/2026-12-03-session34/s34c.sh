#!/bin/bash
# Session 34 call 3 (H200): where res5[a-c]_branch2c's backward-data GEMM (M 1568, N 512, K 2048,
# bf16) spends its time, ours (gpu:wgmma_implicit_gemm's default plan: 128 x 128, split 2) against
# PyTorch 2.11's (cuBLASLt nvjet 64 x 112, clusters 4 x 2, per session 33): Nsight Compute's
# SpeedOfLight and MemoryWorkloadAnalysis sections, and L2 bytes, per kernel.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
PY=/opt/torch/.venv/bin/python3
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
NCU=/usr/local/cuda/bin/ncu; [ -x $NCU ] || NCU=$(command -v ncu)
B='--dtype bf16 --layout nhwc --batch 32'
M=gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
timeout -k 5 120 $NCU --metrics $M --kernel-name regex:'wgmma|reduce_splits' --launch-count 6 \
  /tmp/g/gpu_bench --suite devbin/r5c.txt $B --direction bwd_data --runs 5 --only gpu:wgmma_implicit_gemm > $L/ncu_own_metrics.log 2>&1; t "own metrics rc $?"
timeout -k 5 120 $NCU --metrics $M --kernel-name regex:'nvjet|xmma|dgrad|gemm|splitK' --launch-skip 50 --launch-count 4 \
  $PY devbin/torch_r5c.py > $L/ncu_torch_metrics.log 2>&1; t "torch metrics rc $?"
timeout -k 5 150 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis --kernel-name regex:'wgmma' --launch-count 2 \
  /tmp/g/gpu_bench --suite devbin/r5c.txt $B --direction bwd_data --runs 5 --only gpu:wgmma_implicit_gemm > $L/ncu_own_sections.log 2>&1; t "own sections rc $?"
timeout -k 5 150 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis --kernel-name regex:'nvjet|xmma|dgrad|gemm' --launch-skip 50 --launch-count 2 \
  $PY devbin/torch_r5c.py > $L/ncu_torch_sections.log 2>&1; t "torch sections rc $?"
cat $L/times.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
