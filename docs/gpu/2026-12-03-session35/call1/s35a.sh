#!/bin/bash
# Session 35 call 1 (H200 host, Emerald Rapids), main + gpu-split-clusters + the plan settings read
# at each plan. GPU (cores 12-15): the whole gpu_tests (Gpu.TensorCoreWgmmaSplitClusters now forces
# tiles, splits 3 and 4 and the bulk-copy kernel per scope); the shape tests with the bulk-copy
# kernel forced for the whole process (128 x 128 split 2 and 128 x 64 split 4 as clusters, 128 x
# 128 split 3 as planes); memcheck and racecheck on the split-cluster test.
# CPU (cores 0-11, three 2-thread jobs at a time on core pairs 0-1, 4-5, 8-9): issue 16's ratios,
# convguard_bench on both suites, every direction, f32 and bf16, against oneDNN 2.6.3.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
mkdir -p /tmp/c /tmp/g && tar -C /tmp/c -xJf devbin/cpu35.tar.xz && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
cpu() {
  export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
  job() {  # CPUS NAME SUITE DTYPE DIR
    timeout -k 5 240 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
      --dtypes $4 --directions $5 > $L/$2.log 2>&1
    t "$2 rc $?"
  }
  for d in f32 bf16; do
    job 0,1 r50_fwd_$d resnet50 $d fwd & job 4,5 r50_bwdd_$d resnet50 $d bwd_data &
    job 8,9 r50_bwdw_$d resnet50 $d bwd_weights & wait
    job 0,1 std_fwd_$d standard $d fwd & job 4,5 std_bwdd_$d standard $d bwd_data &
    job 8,9 std_bwdw_$d standard $d bwd_weights & wait
  done
}
gpu() {
  export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
  G="taskset -c 12-15 /tmp/g/gpu_tests"
  timeout -k 5 300 $G > $L/tests.log 2>&1; t "gpu_tests rc $?"
  SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaWideSplitsAndPixelTies:Gpu.LargeLayersVerifyBySampling:Gpu.TensorCoreWgmmaSplitClusters'
  for run in 128x128:8:2 128x64:8:4 128x128:0:3; do
    IFS=: read tile cl n <<< "$run"
    CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=$tile CONVGUARD_WGMMA_SPLIT_CLUSTER=$cl CONVGUARD_WGMMA_SPLIT=$n \
      timeout -k 5 200 $G --gtest_filter="$SHAPES" > $L/forced_${tile}_c${cl}_s$n.log 2>&1; t "forced $tile c$cl s$n rc $?"
  done
  CS=/usr/local/cuda/bin/compute-sanitizer; [ -x $CS ] || CS=$(command -v compute-sanitizer)
  timeout -k 5 200 $CS --tool memcheck $G --gtest_filter='*SplitClusters*' > $L/memcheck.log 2>&1; t "memcheck rc $?"
  timeout -k 5 200 $CS --tool racecheck $G --gtest_filter='*SplitClusters*' > $L/racecheck.log 2>&1; t "racecheck rc $?"
}
cpu > $L/cpu.out 2>&1 & CP=$!
gpu > $L/gpu.out 2>&1 & GP=$!
(sleep 545; t "watchdog"; pkill -f convguard_bench; pkill -f gpu_tests; pkill -f compute-sanitizer) & WD=$!
wait $CP $GP; kill $WD 2>/dev/null
cat $L/times.log; tail -3 $L/tests.log; grep -h "PASSED\|FAILED" $L/forced_*.log | sort | uniq -c
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $L/memcheck.log $L/racecheck.log
for f in $L/r50_* $L/std_*; do echo "== $f"; grep -i geomean $f | head -4; done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
