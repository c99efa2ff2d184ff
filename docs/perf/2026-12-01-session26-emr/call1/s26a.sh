#!/bin/bash
# Session 26 call 1 (CPU only, the device host's Xeon): cpu:bf16_direct:amx_bf16's new
# backward-weights. lscpu; the bf16 unit tests on AMX (every direction now) and the property
# set; bwprof (the AMX path's whole time, its kernel at several pixel-block sizes, the AMX and
# AVX512_BF16 solvers' runs interleaved) on ResNet-50 layers at b8, 2 threads; then the
# benchmark, bf16 backward-weights on ResNet-50 and standard, two jobs on their own core pairs.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu26.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
lscpu > $L/lscpu.txt
(timeout -k 5 90 taskset -c 8-9 /tmp/c/unit_tests --gtest_filter='Property.Bf16*:DType.*' > $L/ut_bf16.log 2>&1; t "ut_bf16 rc $?") &
args=(); for p in mb8ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3 mb8ic64ih56iw56oc64oh56ow56kh3kw3ph1pw1 \
  mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1 mb8ic256ih14iw14oc256oh14ow14kh3kw3ph1pw1 mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1 \
  mb8ic128ih56iw56oc128oh28ow28kh3kw3sh2sw2ph1pw1 mb8ic64ih56iw56oc256oh56ow56kh1kw1 mb8ic256ih56iw56oc64oh56ow56kh1kw1 \
  mb8ic1024ih14iw14oc256oh14ow14kh1kw1 mb8ic1024ih14iw14oc2048oh7ow7kh1kw1sh2sw2 mb8ic2048ih7iw7oc512oh7ow7kh1kw1; do
  args+=("--dir=BWD_W --dt=bf16 $p"); done
OMP_NUM_THREADS=2 timeout 200 taskset -c 0,1 /tmp/c/bwprof "${args[@]}" > $L/prof.log 2>&1; t "prof rc $?"
wait
job() {  # CPUS NAME SUITE
  timeout -k 5 300 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes bf16 --directions bwd_weights > $L/$2.log 2>&1
  t "$2 rc $?"
}
job 0,1 r50_bwdw_bf16 resnet50 &
job 2,3 std_bwdw_bf16 standard &
(timeout -k 5 250 taskset -c 8-11 /tmp/c/unit_tests --gtest_filter='Property.*' > $L/ut_property.log 2>&1; t "ut_property rc $?") &
wait
cat $L/times.log
grep -h -A2 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "PASSED|FAILED|SKIPPED" $L/ut_bf16.log | head; grep -h -E "^\[  (PASSED|FAILED)" $L/ut_property.log
cut -c1-400 $L/prof.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
