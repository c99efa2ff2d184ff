#!/bin/bash
# Session 25 call 1. CPU (cores 0-11): cpu:bf16_direct:amx_bf16 (new) verified on the host's AMX
# by the unit tests, then the bf16 benchmark, forward and backward-data, vs oneDNN (2 threads a
# job). GPU (cores 12-15): issue 17's targets in one call: ResNet-50 bf16 NHWC b32 fwd, bwd_data,
# bwd_weights and b256 fwd, and f32 NCHW b32 in the three directions (TF32 off), own solvers and
# every cuDNN engine through the plugin on PyTorch's cuDNN 9.19, then PyTorch under graph replay.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu25.tar.xz || exit 1
tar xJf devbin/gp.tar.xz || exit 1
cpu() {
  export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
  U=/tmp/c/unit_tests
  timeout -k 5 60 taskset -c 0-1 $U --gtest_filter='Property.Bf16*:DType.*' > $L/ut_bf16.log 2>&1; t "ut_bf16 rc $?"
  (timeout -k 5 250 taskset -c 8-11 $U --gtest_filter='Property.*' > $L/ut_property.log 2>&1; t "ut_property rc $?") &
  job() {  # CPUS NAME SUITE DIR
    timeout -k 5 330 taskset -c $1 /tmp/c/convguard_bench --suite data/suites/$3.txt --reps 3 --threads 2 \
      --dtypes bf16 --directions $4 > $L/$2.log 2>&1
    t "$2 rc $?"
  }
  job 0,1 r50_fwd_bf16 resnet50 fwd &
  job 2,3 r50_bwdd_bf16 resnet50 bwd_data &
  job 4,5 std_fwd_bf16 standard fwd &
  job 6,7 std_bwdd_bf16 standard bwd_data &
  wait
}
gpu() {
  PY=/opt/torch/.venv/bin/python3
  CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  export CONVGUARD_PLUGINS=$PWD/build/release/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
  G=build/release/bench/gpu_bench
  g() {  # NAME JSON LIMIT ARGS...
    local n=$1 j=$2 lim=$3; shift 3
    timeout -k 5 $lim taskset -c 12-15 $G --suite data/suites/resnet50.txt "$@" --json $L/$j.jsonl > $L/$n.log 2>&1
    t "$n rc $?"
  }
  B='--dtype bf16 --layout nhwc'; OB='gpu:wgmma_*,cudnn:*'
  g bf16_fwd32 bf16 60 --batch 32 $B --direction fwd --runs 30 --only "$OB"
  g bf16_bwdd32 bf16 90 --batch 32 $B --direction bwd_data --runs 30 --only "$OB"
  g bf16_bwdw32 bf16 80 --batch 32 $B --direction bwd_weights --runs 30 --only "$OB"
  g bf16_fwd256 bf16_256 100 --batch 256 $B --direction fwd --runs 10 --only "$OB"
  F='--dtype f32 --layout nchw'; OF='gpu:simt_gemm,cudnn:*'
  for j in bf16 bf16_256; do
    timeout -k 5 60 taskset -c 12-15 $PY bench/gpu_peer.py $L/$j.jsonl > $L/peer_$j.log 2>&1; t "peer_$j rc $?"
  done
  g f32_fwd32 f32 70 --batch 32 $F --direction fwd --runs 10 --only "$OF"
  g f32_bwdd32 f32 70 --batch 32 $F --direction bwd_data --runs 10 --only "$OF"
  g f32_bwdw32 f32 70 --batch 32 $F --direction bwd_weights --runs 10 --only "$OF"
  for j in f32; do
    timeout -k 5 60 taskset -c 12-15 $PY bench/gpu_peer.py $L/$j.jsonl > $L/peer_$j.log 2>&1; t "peer_$j rc $?"
  done
}
cpu > $L/cpu.out 2>&1 & CP=$!
gpu > $L/gpu.out 2>&1 & GP=$!
# Past 540 s whatever still runs is stopped, so that the logs are packed before the call's limit.
(sleep 540; t "watchdog"; pkill -f convguard_bench; pkill -f unit_tests; pkill -f gpu_bench; pkill -f gpu_peer) & WD=$!
wait $CP $GP; kill $WD 2>/dev/null
cat $L/times.log
grep -h -A4 "^geomean" $L/r50_*.log $L/std_*.log
grep -h -E "verified|PASSED|FAILED|SKIPPED" $L/ut_bf16.log | head; grep -h -E "^\[  (PASSED|FAILED)" $L/ut_property.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
