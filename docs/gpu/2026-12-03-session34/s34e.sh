#!/bin/bash
# Session 34 call 5 (H200), branch gpu-split-clusters after call 4 and its review (largest cluster 2
# by default, the test on natural plans, sums' rows 8 floats padded): the whole gpu_tests; the shape tests with the bulk-copy kernel's
# 128 x 128 and 128 x 64 tiles split 2-8 as clusters, and 3 as planes (scripts/gpu_check.sh's step);
# memcheck and racecheck on the new test; res5[a-c]_branch2c backward-data planes against
# clusters, three rounds interleaved; the b32 bf16 backward-data and forward geomeans and PyTorch.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
PY=/opt/torch/.venv/bin/python3
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
timeout -k 5 300 /tmp/g/gpu_tests > $L/tests.log 2>&1; t "gpu_tests rc $?"
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaWideSplitsAndPixelTies:Gpu.LargeLayersVerifyBySampling:Gpu.TensorCoreWgmmaSplitClusters'
for run in 128x128:8:2 128x128:8:3 128x128:8:8 128x64:8:2 128x64:8:4 128x128:0:3; do
  IFS=: read tile cl n <<< "$run"
  CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=$tile CONVGUARD_WGMMA_SPLIT_CLUSTER=$cl CONVGUARD_WGMMA_SPLIT=$n \
    timeout -k 5 200 /tmp/g/gpu_tests --gtest_filter="$SHAPES" > $L/forced_${tile}_c${cl}_s$n.log 2>&1; t "forced $tile c$cl s$n rc $?"
done
CS=/usr/local/cuda/bin/compute-sanitizer; [ -x $CS ] || CS=$(command -v compute-sanitizer)
timeout -k 5 240 $CS --tool memcheck /tmp/g/gpu_tests --gtest_filter='*SplitClusters*' > $L/memcheck.log 2>&1; t "memcheck rc $?"
timeout -k 5 240 $CS --tool racecheck /tmp/g/gpu_tests --gtest_filter='*SplitClusters*' > $L/racecheck.log 2>&1; t "racecheck rc $?"
B='--dtype bf16 --layout nhwc --batch 32'
for r in 1 2 3; do
  for c in 0 2; do
    CONVGUARD_WGMMA_SPLIT_CLUSTER=$c timeout -k 5 30 /tmp/g/gpu_bench --suite devbin/r5c.txt $B --direction bwd_data --runs 40 \
      --only gpu:wgmma_implicit_gemm > $L/r5c_c${c}_r$r.log 2>&1; t "r5c c$c r$r rc $?"
  done
done
for d in bwd_data fwd; do
  timeout -k 5 90 /tmp/g/gpu_bench --suite data/suites/resnet50.txt $B --direction $d --runs 30 \
    --only gpu:wgmma_implicit_gemm --json $L/own_$d.jsonl > $L/own_$d.log 2>&1; t "own $d rc $?"
done
cat $L/own_bwd_data.jsonl $L/own_fwd.jsonl > $L/own.jsonl
timeout -k 5 150 $PY bench/gpu_peer.py $L/own.jsonl > $L/peer.log 2>&1; t "peer rc $?"
cat $L/times.log; tail -3 $L/tests.log; grep -h "PASSED\|FAILED" $L/forced_*.log | sort | uniq -c; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
