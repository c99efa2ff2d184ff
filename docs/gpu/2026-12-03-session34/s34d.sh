#!/bin/bash
# Session 34 call 4 (H200), branch gpu-split-clusters: the bulk-copy kernel's splits as one
# cluster along z, summed through distributed shared memory (WgPlan::split_clusters). The whole
# gpu_tests; compute-sanitizer memcheck and racecheck on the new test; ResNet-50 b32 bf16 NHWC
# forward and backward-data, gpu:wgmma_implicit_gemm with the planes (CONVGUARD_WGMMA_SPLIT_CLUSTER=0),
# the default (clusters up to 4) and clusters up to 8, interleaved, two rounds; PyTorch's peer.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
PY=/opt/torch/.venv/bin/python3
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
timeout -k 5 300 /tmp/g/gpu_tests > $L/tests.log 2>&1; t "gpu_tests rc $?"
CS=/usr/local/cuda/bin/compute-sanitizer; [ -x $CS ] || CS=$(command -v compute-sanitizer)
timeout -k 5 240 $CS --tool memcheck /tmp/g/gpu_tests --gtest_filter='*SplitClusters*' > $L/memcheck.log 2>&1; t "memcheck rc $?"
timeout -k 5 240 $CS --tool racecheck /tmp/g/gpu_tests --gtest_filter='*SplitClusters*' > $L/racecheck.log 2>&1; t "racecheck rc $?"
B='--dtype bf16 --layout nhwc --batch 32'
for r in 1 2; do
  for d in bwd_data fwd; do
    for c in 0 4 8; do
      CONVGUARD_WGMMA_PLAN=1 CONVGUARD_WGMMA_SPLIT_CLUSTER=$c timeout -k 5 90 /tmp/g/gpu_bench --suite data/suites/resnet50.txt $B \
        --direction $d --runs 30 --only gpu:wgmma_implicit_gemm --json $L/own_${d}_c${c}_r$r.jsonl > $L/own_${d}_c${c}_r$r.log 2>&1
      t "own $d c$c r$r rc $?"
    done
  done
done
cat $L/own_bwd_data_c4_r1.jsonl $L/own_fwd_c4_r1.jsonl > $L/own_c4.jsonl
timeout -k 5 150 $PY bench/gpu_peer.py $L/own_c4.jsonl > $L/peer.log 2>&1; t "peer rc $?"
cat $L/times.log; tail -3 $L/tests.log; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
