#!/bin/bash
# Session 25 call 3: after the packing fast paths (even-C pairs in place, masked transposes at
# ragged edges, the filter packed in two passes) and 256 KiB AMX blocks: the phase profile alone,
# then the unit tests on AMX and the bf16 benchmark (4 jobs, 2 cores each).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu25.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64 CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
P=(
 "mb8ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3"
 "mb8ic64ih56iw56oc64oh56ow56kh1kw1"
 "mb8ic64ih56iw56oc64oh56ow56kh3kw3ph1pw1"
 "mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1"
 "mb8ic256ih14iw14oc256oh14ow14kh3kw3ph1pw1"
 "mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1"
 "mb8ic512ih28iw28oc128oh28ow28kh1kw1"
 "mb8ic512ih28iw28oc1024oh14ow14kh1kw1sh2sw2"
)
args=(); for p in "${P[@]}"; do args+=("--dt=bf16 $p" "--dt=bf16 --stag=axb --dtag=axb $p"); done
OMP_NUM_THREADS=2 timeout 120 taskset -c 0,1 /tmp/c/amxprof "${args[@]}" > $L/prof.log 2>&1; t "prof rc $?"
timeout -k 5 60 taskset -c 8-9 /tmp/c/unit_tests --gtest_filter='Property.Bf16*:DType.*' > $L/ut_bf16.log 2>&1; t "ut_bf16 rc $?"
job() {  # CPUS NAME SUITE DIR
  timeout -k 5 330 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes bf16 --directions $4 > $L/$2.log 2>&1
  t "$2 rc $?"
}
job 0,1 r50_fwd_bf16 resnet50 fwd &
job 2,3 r50_bwdd_bf16 resnet50 bwd_data &
job 4,5 std_fwd_bf16 standard fwd &
job 6,7 std_bwdd_bf16 standard bwd_data &
(timeout -k 5 250 taskset -c 10-13 /tmp/c/unit_tests --gtest_filter='Property.*:Bf16*:Staging*' > $L/ut_property.log 2>&1; t "ut_property rc $?") &
wait
cat $L/times.log $L/prof.log
grep -h -A2 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "verified|PASSED|FAILED|SKIPPED" $L/ut_bf16.log | head; grep -h -E "^\[  (PASSED|FAILED)" $L/ut_property.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
