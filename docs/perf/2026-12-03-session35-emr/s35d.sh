#!/bin/bash
# Session 35 call 4 (H200 host, Emerald Rapids, CPU only): where small layers' time goes against
# oneDNN: the standard suite's small problems (devbin/small35.txt) forward, f32 and bf16, every
# solver, at 1 and 2 threads and OMP_WAIT_POLICY passive / active; four jobs at a time on core
# pairs 0-1, 4-5, 8-9, 12-13, two rounds with the settings moved to other pairs.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu35.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
job() {  # CPUS THREADS WAIT ROUND
  OMP_WAIT_POLICY=$3 timeout -k 5 200 taskset -c $1 /tmp/c/convguard_bench --suite devbin/small35.txt --reps 5 \
    --threads $2 --dtypes f32,bf16 --directions fwd > $L/t$2_$3_r$4.log 2>&1
  t "t$2 $3 r$4 on $1 rc $?"
}
job 0,1 1 passive 1 & job 4,5 2 passive 1 & job 8,9 1 active 1 & job 12,13 2 active 1 & wait
job 12,13 1 passive 2 & job 8,9 2 passive 2 & job 4,5 1 active 2 & job 0,1 2 active 2 & wait
cat $L/times.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
