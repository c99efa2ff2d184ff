#!/bin/bash
# TRIED, NOT KEPT (session 34): cpu:bwdd_rows:avx2's plain stores for reductions under 128 rows
# (kAvx2StreamFromDepth in src/cpu/solvers/rows_conv.cpp extended to backward-data; "new", a build
# not committed) against main's rule ($OLD, "old": backward-data streams), interleaved, three rounds, backward-data f32 on
# the standard suite's seed003-miopendriver (1 GiB dx, 25-row reduction) and ResNet-50's conv1
# (phased, 3,136 rows: streams in both builds).
D=$(dirname "$0"); OLD=${OLD:-/tmp/bench_before}
for r in 1 2 3; do
  for b in old new; do
    B=$OLD; [ $b = new ] && B=build/release/bench/convguard_bench
    $B --problem 'mb1024ic256ih32oc1oh32kh5ph2_n"seed003-miopendriver"' \
       --problem 'mb8ic3ih224oc64oh112kh7sh2ph3_n"conv1"' \
       --reps 3 --directions bwd_data --dtypes f32 --threads 2 > $D/r${r}_$b.log 2>&1
  done
done
