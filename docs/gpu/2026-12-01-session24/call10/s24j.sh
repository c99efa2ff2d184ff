#!/bin/bash
# Session 24: the honest peer after the producers' carries (d89d01b): ResNet-50 b32 bf16 NHWC
# forward (then backward-data while time lasts), own wgmma solvers and every cuDNN engine through
# the plugin on PyTorch's cuDNN 9.19, then PyTorch's conv under CUDA-graph replay (gpu_peer.py).
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/gp.tar.xz
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/build/release/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
S0=$(date +%s)
for d in fwd bwd_data; do
  [ $(( $(date +%s) - S0 )) -lt 200 ] || break
  timeout 190 build/release/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction $d --runs 30 --only 'gpu:wgmma_*,cudnn:*' --json $L/peer.jsonl > $L/peer_$d.log 2>&1
  echo "$d rc $? at $(( $(date +%s) - S0 ))s" >> $L/times.log
done
timeout 120 $PY bench/gpu_peer.py $L/peer.jsonl > $L/peer.log 2>&1; echo "peer rc $? at $(( $(date +%s) - S0 ))s" >> $L/times.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
