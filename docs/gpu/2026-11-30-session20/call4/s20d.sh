#!/bin/bash
# Session 20, call 4 (H200): backward-data b256 against the peer (plugin cuDNN 9.19 and PyTorch 2.11
# under CUDA-graph replay), alone and 8 calls back to back, after the ws-0 pixel-wide tie.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s20d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
peer() {  # name direction batch runs calls limit
  timeout $6 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $3 --dtype bf16 --layout nhwc \
    --direction $2 --runs $4 --calls $5 --only 'gpu:wgmma_*,cudnn:*' --json $O/$1.jsonl > $O/bench_$1.log 2>&1
  echo "$1: rc $? $(t)"
  "$PY" bench/gpu_peer.py $O/$1.jsonl > $O/peer_$1.log 2>&1; grep -A3 "^geomean" $O/peer_$1.log | tail -2
}
peer d256_c1 bwd_data 256 5 1 200
peer d256_c8 bwd_data 256 3 8 250
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s20d.tar.xz s20d
