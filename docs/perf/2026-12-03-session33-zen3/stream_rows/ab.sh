#!/bin/bash
# The AVX2 rows kernels' plain stores for reductions under 128 rows (kAvx2StreamFromDepth in
# src/cpu/solvers/rows_conv.cpp; forward only) against the build before it ($OLD: a copy of convguard_bench
# built at the parent commit), interleaved, three rounds, forward f32 on the first layers.
D=$(dirname "$0"); OLD=${OLD:-/tmp/bench_before}
for r in 1 2 3; do
  for b in old new; do
    B=$OLD; [ $b = new ] && B=build/release/bench/convguard_bench
    $B --suite $D/first_layers.txt --reps 3 --directions fwd --dtypes f32 --threads 2 > $D/r${r}_$b.log 2>&1
  done
done
