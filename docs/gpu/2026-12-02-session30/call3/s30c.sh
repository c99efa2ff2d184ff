#!/bin/bash
# Session 30 call 3 (GPU, H200): is gpu:tc_bwd_weights:tf32's cvt.rna rounding of every fragment
# element what limits it? The committed kernel (rounded) against the same built with the rounding
# removed (the tensor cores then truncate), ResNet-50 b32 f32 NHWC backward-weights, interleaved
# twice, no peer (calls 1-2 measured it).
set -u
L=$OUT/logs; mkdir -p $L
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
xz -dc devbin/gpu_bench_trunc.xz > /tmp/g/gpu_bench_trunc && chmod +x /tmp/g/gpu_bench_trunc
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
for round in 1 2; do
  for v in gpu_bench gpu_bench_trunc; do
    timeout -k 5 100 /tmp/g/$v --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc \
      --direction bwd_weights --runs 30 --only 'gpu:tc_bwd_weights:tf32' > $L/$v.$round.log 2>&1
    echo "$v round $round rc $?" >> $L/times.log
  done
done
cat $L/times.log
for f in $L/*.log; do echo "$f: $(grep -c 'gpu:tc_bwd_weights:tf32 ' $f)"; done
paste <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench.1.log | awk '{print $2}') <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench_trunc.1.log | awk '{print $2}') <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench.2.log | awk '{print $2}') <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench_trunc.2.log | awk '{print $2}')
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
