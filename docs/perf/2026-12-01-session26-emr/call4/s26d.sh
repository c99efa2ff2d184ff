#!/bin/bash
# Session 26 call 4 (CPU only, the device host's Xeon): the new cpu:bf16_planar:amx_bf16 (forward)
# and the final backward-weights order. The bf16 unit tests on AMX, the property set; the bf16
# benchmark: ResNet-50 and standard forward, ResNet-50 backward-weights, three jobs on their own
# core pairs.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu26.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
timeout -k 5 120 taskset -c 8-9 /tmp/c/unit_tests --gtest_filter='Property.Bf16*:DType.*' > $L/ut_bf16.log 2>&1; t "ut_bf16 rc $?"
job() {  # CPUS NAME SUITE DIR
  timeout -k 5 300 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes bf16 --directions $4 > $L/$2.log 2>&1
  t "$2 rc $?"
}
job 0,1 r50_fwd_bf16 resnet50 fwd &
job 2,3 std_fwd_bf16 standard fwd &
job 4,5 r50_bwdw_bf16 resnet50 bwd_weights &
(timeout -k 5 250 taskset -c 8-11 /tmp/c/unit_tests --gtest_filter='Property.*' > $L/ut_property.log 2>&1; t "ut_property rc $?") &
wait
cat $L/times.log
grep -h -A2 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "verified fwd|PASSED|FAILED|SKIPPED" $L/ut_bf16.log | head -20; grep -h -E "^\[  (PASSED|FAILED)" $L/ut_property.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
