#!/bin/bash
# Session 23 call 2: the CPU benchmark jobs call 1 lost, and ResNet-50 f32 with Debian's OpenBLAS
# 0.3.21 (call 1's cpu:im2col_gemm used whatever libopenblas.so.0 the device host has).
L=$OUT/logs; mkdir -p $L
exec > >(tee $L/run.log) 2>&1
ldconfig -p | grep -i -E "blas|dnnl" ; ls -la /usr/lib/x86_64-linux-gnu/libopenblas* 2>/dev/null
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu23.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib
B=/tmp/c/convguard_bench; export CUDA_VISIBLE_DEVICES=  # its GPU code is zeroed out (carry size)
job() {  # job CPUS NAME BLAS SUITE DIR DTYPES
  local log=$L/$2.log
  if [ "$3" = debian ]; then export CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0; else unset CONVGUARD_BLAS; fi
  echo "CONVGUARD_BLAS=${CONVGUARD_BLAS:-unset}" > $log
  timeout 470 taskset -c $1 $B --suite data/suites/$4.txt --reps 3 --threads 2 --dtypes $6 --directions $5 >> $log 2>&1
  echo "job $2 on CPUs $1: rc $? at $SECONDS s" >> $log
}
job 0,1 standard_fwd_f32 debian standard fwd f32 &
job 2,3 standard_fwd_bf16 debian standard fwd bf16 &
job 4,5 standard_bwdw_f32 debian standard bwd_weights f32 &
job 6,7 standard_bwdw_bf16 debian standard bwd_weights bf16 &
job 8,9 resnet50_fwd_f32_debblas debian resnet50 fwd f32 &
job 10,11 resnet50_bwdd_f32_debblas debian resnet50 bwd_data f32 &
job 12,13 resnet50_bwdw_f32_debblas debian resnet50 bwd_weights f32 &
# The unit tests on AVX-512 (this build machine has AVX2 only): two gtest shards, one core each.
for i in 0 1; do
  (CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0 GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$i timeout 470 \
     taskset -c $((14 + i)) /tmp/c/unit_tests > $L/unit_tests_$i.log 2>&1; echo "unit shard $i rc $?" >> $L/unit_tests_$i.log) &
done
wait
grep -h -A4 "^geomean" $L/*.log; grep -h "^job" $L/*.log; tail -n 3 $L/unit_tests_*.log; grep -h "FAILED" $L/unit_tests_*.log | head -20
tar -C $OUT -cJf $OUT/logs.tar.xz logs && rm -rf $L
