#!/bin/bash
# Session 19, call 10 (H200, a90046c): where the split plans' time goes. Nsight Compute's kernel
# durations (gpu__time_duration) and DRAM/L2 throughput of each kernel a run launches, on b32's
# res5[a-c]_branch2c backward-data (128 x 128 split in 2) and res5[b-c]_branch2b forward and
# backward-data (128 x 256 split in 5).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19j; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size
for d in bwd_data fwd; do
  timeout 200 ncu --metrics $M --csv db/bench/gpu_bench --suite devbin/l8.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction $d --runs 2 --only gpu:wgmma_implicit_gemm > $O/ncu_$d.csv 2> $O/ncu_$d.err; echo "ncu $d rc $? $(t)"
done
grep -h "wgmma\|split\|reduce" $O/ncu_*.csv | cut -c1-400 | head -60
echo "total $(t)"
