#!/bin/bash
# The rows kernels' channel-block slices (rows_conv_kernels.hpp: for_each_item) against main's
# items: $OLD is a convguard_bench of an experiment's build whose CG_ITEMS=1 gives main's items
# (work items a thread wanted before slicing; not committed), run with CG_ITEMS=1; "new" is this
# commit's. Interleaved, three rounds, forward f32 on session 33's first layers.
D=$(dirname "$0"); OLD=${OLD:-/tmp/bench_before}
L=$D/../../2026-12-03-session33-zen3/stream_rows/first_layers.txt
for r in 1 2 3; do
  for b in old new; do
    if [ $b = old ]; then
      CG_ITEMS=1 $OLD --suite $L --reps 3 --directions fwd --dtypes f32 --threads 2 > $D/r${r}_$b.log 2>&1
    else
      build/release/bench/convguard_bench --suite $L --reps 3 --directions fwd --dtypes f32 --threads 2 > $D/r${r}_$b.log 2>&1
    fi
  done
done
