#!/bin/bash
# Session 30 call 4 (GPU, H200): gpu:tc_bwd_weights:tf32 with 32-pixel f32 stages (4 mma steps a barrier, 3 stages, 96 KiB)
# against the committed 16-pixel stages (2 steps a barrier, 4 stages, 64 KiB): registers already keep
# it at 2 blocks an SM. ResNet-50 b32 f32 NHWC backward-weights, interleaved twice, no peer.
set -u
L=$OUT/logs; mkdir -p $L
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
xz -dc devbin/gpu_bench_k32.xz > /tmp/g/gpu_bench_k32 && chmod +x /tmp/g/gpu_bench_k32
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
for round in 1 2; do
  for v in gpu_bench gpu_bench_k32; do
    timeout -k 5 100 /tmp/g/$v --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc \
      --direction bwd_weights --runs 30 --only 'gpu:tc_bwd_weights:tf32' > $L/$v.$round.log 2>&1
    echo "$v round $round rc $?" >> $L/times.log
  done
done
cat $L/times.log
for f in $L/*.log; do echo "$f: $(grep -c 'gpu:tc_bwd_weights:tf32 ' $f)"; done
paste <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench.1.log | awk '{print $2}') <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench_k32.1.log | awk '{print $2}') <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench.2.log | awk '{print $2}') <(grep 'gpu:tc_bwd_weights:tf32 ' $L/gpu_bench_k32.2.log | awk '{print $2}')
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
