#!/bin/bash
# Session 35 call 6 (H200 host, Emerald Rapids, CPU only), branch amx-windows: cpu:bf16_planar:
# amx_bf16's windows for C < 32 on real AMX. The property tests that run it (cores 0-1); the
# small problems (devbin/small35.txt) bf16 forward, main's build (cpu35) against the branch's
# (cpu35w), at once on core pairs 4-5 and 8-9, two rounds with the pairs swapped; the standard
# suite's and ResNet-50's bf16 forward on the branch (cores 12-13, 14-15).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
for b in cpu35 cpu35w; do mkdir -p /tmp/$b && tar -C /tmp/$b -xJf devbin/$b.tar.xz || exit 1; done
export CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=2
tests() {
  LD_LIBRARY_PATH=/tmp/cpu35w/lib CONVGUARD_BLAS=/tmp/cpu35w/lib/libopenblas.so.0 timeout -k 5 400 taskset -c 0,1 \
    /tmp/cpu35w/unit_tests --gtest_filter='Property.Bf16Planar*:Property.EveryApplicableSolverMatchesTheReference:Property.WideChannels*' \
    > $L/property.log 2>&1; t "property rc $?"
}
bench() {  # BUILD CPUS SUITE NAME
  LD_LIBRARY_PATH=/tmp/$1/lib CONVGUARD_BLAS=/tmp/$1/lib/libopenblas.so.0 timeout -k 5 240 taskset -c $2 \
    /tmp/$1/convguard_bench --suite $3 --reps 5 --threads 2 --dtypes bf16 --directions fwd > $L/$4.log 2>&1
  t "$4 rc $?"
}
tests & T1=$!
(bench cpu35w 12,13 data/suites/standard.txt std_fwd_bf16_w; bench cpu35w 12,13 data/suites/resnet50.txt r50_fwd_bf16_w) & T2=$!
for r in 1 2; do
  if [ $r = 1 ]; then a=4,5; b=8,9; else a=8,9; b=4,5; fi
  bench cpu35 $a devbin/small35.txt small_main_r$r & P1=$!
  bench cpu35w $b devbin/small35.txt small_win_r$r & P2=$!
  wait $P1 $P2
done
wait $T1 $T2
cat $L/times.log; tail -3 $L/property.log
for f in $L/small_*.log $L/*_w.log; do echo "== $f"; grep -A2 "^geomean" $f | tail -2; done
cd $L && paste <(grep -E "^\S+ +fwd +bf16" small_main_r1.log | awk '{print $1, $5, $6, $7}') <(grep -E "^\S+ +fwd +bf16" small_win_r1.log | awk '{print $5, $6, $7}') <(grep -E "^\S+ +fwd +bf16" small_main_r2.log | awk '{print $6, $7}') <(grep -E "^\S+ +fwd +bf16" small_win_r2.log | awk '{print $5, $6, $7}')
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
