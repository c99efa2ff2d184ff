#!/bin/bash
# Session 29 call 1 (CPU only, the device host's Emerald Rapids): cpu:bf16_planar:amx_bf16's
# pointwise path and groups of chunks, and cpu:bf16_direct:amx_bf16's tiles sized to short runs
# (new: aa90fd8's solvers) against the code before them (old: 582e34b's parent's solvers, with
# the same fixed bench), bf16 forward on ResNet-50 and standard,
# four jobs at a time on their own core pairs, old and new side by side, twice with the pairs
# swapped; then the bf16 unit tests on AMX (Property.Bf16*, DType.*).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
for v in old new; do
  mkdir -p /tmp/$v && tar -C /tmp/$v -xJf devbin/cpu29$v.tar.xz || exit 1
done
export CUDA_VISIBLE_DEVICES=
job() {  # CPUS VERSION SUITE ROUND
  LD_LIBRARY_PATH=/tmp/$2/lib CONVGUARD_BLAS=/tmp/$2/lib/libopenblas.so.0 timeout -k 5 240 \
    taskset -c $1 /tmp/$2/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
    --dtypes bf16 --directions fwd > $L/$3_fwd_bf16_$2$4.log 2>&1
  t "$3 $2 round $4 rc $?"
}
job 0,1 old resnet50 1 & job 4,5 new resnet50 1 & job 8,9 old standard 1 & job 12,13 new standard 1 & wait
job 0,1 new resnet50 2 & job 4,5 old resnet50 2 & job 8,9 new standard 2 & job 12,13 old standard 2 & wait
LD_LIBRARY_PATH=/tmp/new/lib timeout -k 5 300 taskset -c 0,1 /tmp/new/unit_tests \
  --gtest_filter='Property.Bf16*:DType.*' > $L/ut_bf16.log 2>&1
t "unit_tests rc $?"
cat $L/times.log
for f in $L/*_bf16_*.log; do echo "$(basename $f): $(grep -A1 '^geomean' $f | tail -1)"; done
tail -3 $L/ut_bf16.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
