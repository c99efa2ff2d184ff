#!/bin/bash
# Session 35 call 2 (H200): issue 17's targets in one call (as session 32's s32b.sh, GPU part), on
# main + gpu-split-clusters: ResNet-50 bf16 NHWC b32 fwd, bwd_data, bwd_weights and b256 fwd, f32
# NCHW b32 in the three directions (TF32 off), own solvers and every cuDNN engine through the plugin
# on PyTorch's cuDNN 9.19, then PyTorch 2.11 under CUDA-graph replay (bench/gpu_peer.py).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_PLUGINS=/tmp/g/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
g() {  # NAME JSON LIMIT ARGS...
  local n=$1 j=$2 lim=$3; shift 3
  timeout -k 5 $lim /tmp/g/gpu_bench --suite data/suites/resnet50.txt "$@" --json $L/$j.jsonl > $L/$n.log 2>&1
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
  timeout -k 5 60 $PY bench/gpu_peer.py $L/$j.jsonl > $L/peer_$j.log 2>&1; t "peer_$j rc $?"
done
cat $L/times.log
for f in $L/peer_*.log; do echo "== $f"; grep -i -E "geomean" $f | head -8; done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
