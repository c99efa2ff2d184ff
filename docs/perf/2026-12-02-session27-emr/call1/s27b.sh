#!/bin/bash
# Session 27 call 1 (CPU only, the device host's Xeon), commit 58e2de2 (aa31ef9's planar filter
# pack and huge-page workspaces, plus the fuzz link fix): the bf16 unit tests on AMX and the
# property set; plprof (cpu:bf16_planar:amx_bf16 by step, its scratch on 4 KiB pages against
# allocate_host_buffer's huge pages, then the planar and bf16_direct:amx_bf16 runs interleaved) on
# ResNet-50 layers at b8, 2 threads, alone; then the bf16 benchmark in every direction on
# ResNet-50 and standard, six jobs on their own core pairs.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag > $L/thp.txt 2>&1
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu27.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
(timeout -k 5 120 taskset -c 12-13 /tmp/c/unit_tests --gtest_filter='Property.Bf16*:DType.*' > $L/ut_bf16.log 2>&1; t "ut_bf16 rc $?") &
args=(); for p in mb8ic64ih56iw56oc64oh56ow56kh3kw3ph1pw1 mb8ic256ih56iw56oc64oh56ow56kh1kw1 mb8ic64ih56iw56oc256oh56ow56kh1kw1 \
  mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1 mb8ic512ih28iw28oc128oh28ow28kh1kw1 mb8ic256ih14iw14oc256oh14ow14kh3kw3ph1pw1 \
  mb8ic1024ih14iw14oc256oh14ow14kh1kw1 mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1 mb8ic512ih7iw7oc2048oh7ow7kh1kw1 mb8ic1024ih14iw14oc2048oh7ow7kh1kw1sh2sw2; do
  args+=("--dt=bf16 $p"); done
OMP_NUM_THREADS=2 timeout 100 taskset -c 0,1 /tmp/c/plprof "${args[@]}" > $L/prof.log 2>&1; t "prof rc $?"
grep AnonHugePages /proc/meminfo >> $L/thp.txt
job() {  # CPUS NAME SUITE DIR
  timeout -k 5 260 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes bf16 --directions $4 > $L/$2.log 2>&1
  t "$2 rc $?"
}
job 0,1 r50_fwd_bf16 resnet50 fwd &
job 2,3 std_fwd_bf16 standard fwd &
job 4,5 r50_bwdw_bf16 resnet50 bwd_weights &
job 6,7 std_bwdw_bf16 standard bwd_weights &
job 8,9 r50_bwdd_bf16 resnet50 bwd_data &
job 10,11 std_bwdd_bf16 standard bwd_data &
(sleep 5; timeout -k 5 250 taskset -c 12-15 /tmp/c/unit_tests --gtest_filter='Property.*' > $L/ut_property.log 2>&1; t "ut_property rc $?") &
wait
cat $L/times.log $L/thp.txt
grep -h -A2 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "verified fwd|PASSED|FAILED|SKIPPED" $L/ut_bf16.log | head -20; grep -h -E "^\[  (PASSED|FAILED)" $L/ut_property.log
cut -c1-330 $L/prof.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
