#!/bin/bash
# Session 22, call 1 (H200): the landed build (db52dd2's GPU code, de26b78's CPU code): gpu_tests;
# the peer on forward b256 and b32 (own wgmma vs cuDNN 9.19 via the plugin and PyTorch 2.11 under
# CUDA-graph replay), alone.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin22.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s22a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt 2>&1
timeout 200 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; tail -3 $O/tests_all.log
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
peer() {  # name direction batch runs calls limit
  timeout $6 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $3 --dtype bf16 --layout nhwc \
    --direction $2 --runs $4 --calls $5 --only 'gpu:wgmma_*,cudnn:*' --json $O/$1.jsonl > $O/bench_$1.log 2>&1
  echo "$1: rc $? $(t)"
  "$PY" bench/gpu_peer.py $O/$1.jsonl > $O/peer_$1.log 2>&1; grep -A3 "^geomean" $O/peer_$1.log | tail -2
}
peer f256_c1 fwd 256 20 1 230
peer f32_c1 fwd 32 30 1 150
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s22a.tar.xz s22a
