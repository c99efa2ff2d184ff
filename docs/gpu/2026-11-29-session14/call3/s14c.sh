#!/bin/bash
# Session 14, call 3 (H200): the honest peer with own and cuDNN calls timed alone (--calls 1, as
# before) and 8 back to back (--calls 8, as gpu_peer.py times PyTorch under graph replay).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
echo "PY $PY cudnn ${CUDNN_LIB:-}"
for d in bwd_weights fwd bwd_data; do
  for c in 1 8; do
    r=$([ $c = 1 ] && echo 30 || echo 12)
    timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
      --direction $d --runs $r --calls $c --only 'gpu:wgmma_*,cudnn:*' --json $O/peer_c$c.jsonl > $O/bench_${d}_c$c.log 2>&1
    echo "$d calls $c: rc $? $(t)"
  done
done
for c in 1 8; do "$PY" bench/gpu_peer.py $O/peer_c$c.jsonl > $O/peer_c$c.log 2>&1; echo "peer c$c $(t)"; grep -A6 "^geomean" $O/peer_c$c.log; done
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s14c.tgz s14c
