#!/bin/bash
# Session 32 call 1 (GPU, H200): the whole gpu_tests binary after gpu:implicit_gemm's gathers moved
# onto Geometry's index helpers (src/gpu/geometry.hpp), then ResNet-50 b32 f32 NCHW forward with
# gpu:implicit_gemm alone (its speed should not move).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
timeout -k 5 420 /tmp/g/gpu_tests > $L/tests.log 2>&1; t "gpu_tests rc $?"
timeout -k 5 100 /tmp/g/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nchw \
  --direction fwd --runs 10 --only 'gpu:implicit_gemm' > $L/igemm_fwd32.log 2>&1; t "bench rc $?"
cat $L/times.log; tail -4 $L/tests.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
