#!/bin/bash
# Streaming (non-temporal) output stores on and off, interleaved: the bench built with
# streams_output() returning false under CG_NOSTREAM (an experiment's build, not committed).
D=$(dirname "$0")
for r in 1 2; do
  for e in "" 1; do
    env ${e:+CG_NOSTREAM=1} build/release/bench/convguard_bench --suite $D/big_outputs.txt --reps 3 \
      --directions fwd,bwd_data --dtypes f32 --threads 2 > $D/round$r${e:+_nostream}.log 2>&1
  done
done
