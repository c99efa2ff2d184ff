#!/bin/bash
# Session 14, call 8 (H200): backward-data's peer at HEAD (7314145) with 8 calls back to back.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14h; mkdir -p $O ${OUT:-out}
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 330 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_data --runs 8 --calls 8 --only 'gpu:wgmma_*,cudnn:*' --json $O/peer_c8.jsonl > $O/bench_bwd_data_c8.log 2>&1
echo "bench rc $? $(( $(date +%s) - S )) s"
"$PY" bench/gpu_peer.py $O/peer_c8.jsonl > $O/peer_c8.log 2>&1; grep -A3 "^geomean" $O/peer_c8.log; grep -A1 "^conv1" $O/peer_c8.log
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s14h.tgz s14h
