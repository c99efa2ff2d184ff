#!/bin/bash
# Session 28 call 2 (CPU only, the device host's Xeon): call 1 with the stride-2 phases zipped into
# dx rows a vector at a time (zip2): the unit tests on AVX-512 and AVX512_BF16, then the
# backward-data benchmark on ResNet-50 and standard in f32 and bf16, four jobs on their own core
# pairs, 2 threads each (every solver and oneDNN interleaved within a job).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu28.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
(timeout -k 5 300 taskset -c 12-15 /tmp/c/unit_tests --gtest_filter='RowsConv.*:Property.*:DType.*' > $L/ut.log 2>&1; t "ut rc $?") &
job() {  # CPUS NAME SUITE DTYPE
  timeout -k 5 420 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes $4 --directions bwd_data > $L/$2.log 2>&1
  t "$2 rc $?"
}
job 0,1 r50_bwdd_f32 resnet50 f32 &
job 2,3 r50_bwdd_bf16 resnet50 bf16 &
job 4,5 std_bwdd_f32 standard f32 &
job 6,7 std_bwdd_bf16 standard bf16 &
wait
cat $L/times.log
grep -h -A2 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "^\[  (PASSED|FAILED)|FAILED|Skipped" $L/ut.log | head -20
grep -h -E "_branch2b|bwdd_rows" $L/r50_*.log | grep -E "sh2|^res" | cut -c1-200 | head -40
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
