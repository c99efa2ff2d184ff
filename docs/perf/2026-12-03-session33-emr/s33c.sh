#!/bin/bash
# Session 33 call 3 (H200 host CPU, Emerald Rapids): the rows kernels' output stores on the AVX-512
# copies, streaming (CG_ROWS_STREAM=1, the rule there) against plain (=0), an experiment's build of
# convguard_bench (the switch is not committed), three rounds interleaved, forward f32 and bf16 on
# the first layers, 2 threads on cores 0-1.
# devbin/cpu33.tar.xz: docs/perf/2026-12-02-session28-emr/pack.sh of that experiment build.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu33.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
for r in 1 2 3; do
  for e in 1 0; do
    CG_ROWS_STREAM=$e timeout -k 5 150 taskset -c 0,1 /tmp/c/convguard_bench --suite docs/perf/2026-12-03-session33-zen3/stream_rows/first_layers.txt --reps 3 \
      --threads 2 --dtypes f32,bf16 --directions fwd > $L/r${r}_stream$e.log 2>&1; t "r$r stream$e rc $?"
  done
done
cat $L/times.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
