#!/bin/bash
# Session 25 call 9: the final build after review (2D filters on the dense-tap packing, the tile
# state requested after the cheap declines). The phase profile first; then as call 8. CPU: the bf16 unit tests on AMX, the property and
# DType tests, the bf16 benchmark (ResNet-50 and standard, fwd and bwd_data; 4 jobs, 2 cores
# each). GPU, at the same time on the other cores: the wgmma backward-weights tests (ragged
# included), the property test.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu25.tar.xz || exit 1
tar xJf devbin/gp25.tar.xz || exit 1
cpu() {
  export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64 CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
  args=(); for p in mb8ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3 mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1 \
    mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1 mb8ic512ih28iw28oc128oh28ow28kh1kw1; do args+=("--dt=bf16 $p"); done
  OMP_NUM_THREADS=2 timeout 60 taskset -c 0,1 /tmp/c/amxprof "${args[@]}" > $L/prof.log 2>&1; t "prof rc $?"
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
  (timeout -k 5 250 taskset -c 8-11 /tmp/c/unit_tests --gtest_filter='Property.*' > $L/ut_property.log 2>&1; t "ut_property rc $?") &
  wait
}
gpu() {
  timeout -k 5 200 taskset -c 12-15 build/release/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.EverySolverMatchesTheReferenceOnRandomProblems:Gpu.TensorCoreWgmmaBackwardData*' > $L/gpu_tests.log 2>&1
  t "gpu_tests rc $?"
}
cpu > $L/cpu.out 2>&1 & CP=$!
gpu > $L/gpu.out 2>&1 & GP=$!
wait $CP $GP
cat $L/times.log
grep -h -A2 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "verified fwd|PASSED|FAILED|SKIPPED" $L/ut_bf16.log | head; grep -h -E "^\[  (PASSED|FAILED)" $L/ut_property.log
grep -E "OK \]|FAILED|PASSED" $L/gpu_tests.log | head -20
cut -c1-150 $L/prof.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
