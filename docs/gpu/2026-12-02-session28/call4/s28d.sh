#!/bin/bash
# Session 28 call 4 (GPU, H200): issue 17's backward-weights target again with conv1 on the padded
# channels (call 3's binaries): ResNet-50 b32 bf16 NHWC backward-weights, gpu_bench with the cuDNN
# 9.19 plugin (PyTorch's build, every engine) against gpu:wgmma_bwd_weights and gpu:tc_bwd_weights,
# then bench/gpu_peer.py (PyTorch 2.11 under CUDA-graph replay) on the same problems.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp28.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=/tmp/g/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
timeout -k 5 150 /tmp/g/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 30 --only 'gpu:wgmma_bwd_weights,gpu:tc_bwd_weights,cudnn:*' \
  --json $L/bf16_bwdw32.jsonl > $L/bf16_bwdw32.log 2>&1; t "bench rc $?"
timeout -k 5 90 $PY bench/gpu_peer.py $L/bf16_bwdw32.jsonl > $L/peer_bf16_bwdw32.log 2>&1; t "peer rc $?"
cat $L/times.log
grep -E "over [0-9]+ problems" $L/bf16_bwdw32.log | head; grep -E "conv1|over [0-9]+ problems|flag" $L/peer_bf16_bwdw32.log | head -20
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
