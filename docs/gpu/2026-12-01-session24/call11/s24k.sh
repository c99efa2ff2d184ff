#!/bin/bash
# Session 24: the honest peer, continued: b32 backward-weights and b256 forward (bf16 NHWC).
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/gp.tar.xz
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/build/release/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
S0=$(date +%s)
timeout 70 build/release/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 30 --only 'gpu:wgmma_*,cudnn:*' --json $L/peer.jsonl > $L/peer_bwd_weights.log 2>&1
echo "bwd_weights rc $? at $(( $(date +%s) - S0 ))s" >> $L/times.log
timeout 80 build/release/bench/gpu_bench --suite data/suites/resnet50.txt --batch 256 --dtype bf16 --layout nhwc \
  --direction fwd --runs 10 --only 'gpu:wgmma_*,cudnn:*' --json $L/peer.jsonl > $L/peer_fwd256.log 2>&1
echo "fwd256 rc $? at $(( $(date +%s) - S0 ))s" >> $L/times.log
timeout 30 $PY bench/gpu_peer.py $L/peer.jsonl > $L/peer.log 2>&1; echo "peer rc $? at $(( $(date +%s) - S0 ))s" >> $L/times.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
