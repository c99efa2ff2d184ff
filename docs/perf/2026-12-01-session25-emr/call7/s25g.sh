#!/bin/bash
# Session 25 call 7: the AMX kernel with software prefetches, three builds of bf16_amx.cpp linked
# into the phase profiler (A: as committed; B: the next reduction tile's two filter tiles
# prefetched into L1 each step; C: B and the next x tiles' rows), interleaved A B C A B C on the
# same two cores.
set -u
L=$OUT/logs; mkdir -p $L
mkdir -p /tmp/c /tmp/v && tar -C /tmp/c -xJf devbin/cpu25.tar.xz || exit 1
tar -C /tmp/v -xJf devbin/amxvar.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64 CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=2
P=(
 "mb8ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3"
 "mb8ic64ih56iw56oc64oh56ow56kh1kw1"
 "mb8ic64ih56iw56oc64oh56ow56kh3kw3ph1pw1"
 "mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1"
 "mb8ic256ih14iw14oc256oh14ow14kh3kw3ph1pw1"
 "mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1"
 "mb8ic512ih28iw28oc128oh28ow28kh1kw1"
 "mb8ic128ih28iw28oc512oh28ow28kh1kw1"
)
args=(); for p in "${P[@]}"; do args+=("--dt=bf16 --stag=axb --dtag=axb $p"); done
for round in 1 2; do for v in A B C; do
  echo "== $v round $round" >> $L/prof.log
  timeout 60 taskset -c 0,1 /tmp/v/prof_$v "${args[@]}" >> $L/prof.log 2>&1
done; done
cat $L/prof.log | sed 's/--dt=bf16 --stag=axb --dtag=axb //' | cut -c1-150
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
