#!/bin/bash
# Session 32 call 2 (H200 host, Emerald Rapids). GPU (cores 12-15): issue 17's targets in one
# call, as session 25's: ResNet-50 bf16 NHWC b32 fwd, bwd_data, bwd_weights and b256 fwd, f32 NCHW
# b32 in the three directions (TF32 off), own solvers and every cuDNN engine through the plugin on
# PyTorch's cuDNN 9.19, then PyTorch 2.11 under CUDA-graph replay (bench/gpu_peer.py).
# CPU (cores 0-11, three 2-thread jobs at a time on core pairs 0-1, 4-5, 8-9): issue 16's ratios,
# convguard_bench on both suites, every direction, f32 and bf16, against oneDNN 2.6.3.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
mkdir -p /tmp/c /tmp/g && tar -C /tmp/c -xJf devbin/cpu32.tar.xz && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
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
  PY=/opt/torch/.venv/bin/python3
  CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_PLUGINS=/tmp/g/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
  g() {  # NAME JSON LIMIT ARGS...
    local n=$1 j=$2 lim=$3; shift 3
    timeout -k 5 $lim taskset -c 12-15 /tmp/g/gpu_bench --suite data/suites/resnet50.txt "$@" --json $L/$j.jsonl > $L/$n.log 2>&1
    t "$n rc $?"
  }
  B='--dtype bf16 --layout nhwc'; OB='gpu:wgmma_*,cudnn:*'
  g bf16_fwd32 bf16 60 --batch 32 $B --direction fwd --runs 30 --only "$OB"
  g bf16_bwdd32 bf16 90 --batch 32 $B --direction bwd_data --runs 30 --only "$OB"
  g bf16_bwdw32 bf16 80 --batch 32 $B --direction bwd_weights --runs 30 --only "$OB"
  g bf16_fwd256 bf16_256 100 --batch 256 $B --direction fwd --runs 10 --only "$OB"
  F='--dtype f32 --layout nchw'; OF='gpu:simt_gemm,cudnn:*'
  g f32_fwd32 f32 70 --batch 32 $F --direction fwd --runs 10 --only "$OF"
  g f32_bwdd32 f32 70 --batch 32 $F --direction bwd_data --runs 10 --only "$OF"
  g f32_bwdw32 f32 70 --batch 32 $F --direction bwd_weights --runs 10 --only "$OF"
  for j in bf16 bf16_256 f32; do
    timeout -k 5 60 taskset -c 12-15 $PY bench/gpu_peer.py $L/$j.jsonl > $L/peer_$j.log 2>&1; t "peer_$j rc $?"
  done
}
cpu > $L/cpu.out 2>&1 & CP=$!
gpu > $L/gpu.out 2>&1 & GP=$!
# Past 540 s whatever still runs is stopped, so that the logs are packed before the call's limit.
(sleep 540; t "watchdog"; pkill -f convguard_bench; pkill -f gpu_bench; pkill -f gpu_peer) & WD=$!
wait $CP $GP; kill $WD 2>/dev/null
cat $L/times.log
for f in $L/peer_*.log; do echo "== $f"; grep -i -E "geomean" $f | head -8; done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
