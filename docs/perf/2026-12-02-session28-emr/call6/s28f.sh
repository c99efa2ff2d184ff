#!/bin/bash
# Session 28 call 6 (CPU only, the device host's Xeon, while CI ran at home): issue 16's table on
# AVX-512/AMX with the session's final CPU code (9552da3): f32 in every direction on ResNet-50 and
# standard, then bf16 forward and backward-weights (backward-data: calls 1-2), three or four jobs
# at a time on their own core pairs, 2 threads each, every solver and oneDNN interleaved per job.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu28.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
job() {  # CPUS NAME SUITE DTYPE DIR
  timeout -k 5 240 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes $4 --directions $5 > $L/$2.log 2>&1
  t "$2 rc $?"
}
job 0,1 r50_fwd_f32 resnet50 f32 fwd & job 4,5 r50_bwdd_f32 resnet50 f32 bwd_data & job 8,9 r50_bwdw_f32 resnet50 f32 bwd_weights & wait
job 0,1 std_fwd_f32 standard f32 fwd & job 4,5 std_bwdd_f32 standard f32 bwd_data & job 8,9 std_bwdw_f32 standard f32 bwd_weights & wait
job 0,1 r50_fwd_bf16 resnet50 bf16 fwd & job 4,5 r50_bwdw_bf16 resnet50 bf16 bwd_weights &
job 8,9 std_fwd_bf16 standard bf16 fwd & job 12,13 std_bwdw_bf16 standard bf16 bwd_weights & wait
cat $L/times.log
for f in $L/*_f32.log $L/*_bf16.log; do echo "$(basename $f): $(grep -A1 '^geomean' $f | tail -1)"; done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
