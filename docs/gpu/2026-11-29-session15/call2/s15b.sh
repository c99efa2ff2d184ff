#!/bin/bash
# Session 15, call 2 (H200): the peer re-taken where session 14 estimated: bf16 b32
# backward-weights after the relaxed cluster barrier (21423fb), calls alone and 8 back to back;
# bf16 b256 forward (last taken in session 13). Binaries: HEAD at b234b52's GPU code.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s15b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
echo "PY $PY cudnn ${CUDNN_LIB:-}"
for c in 1 8; do
  r=$([ $c = 1 ] && echo 30 || echo 12)
  timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_weights --runs $r --calls $c --only 'gpu:wgmma_*,cudnn:*' --json $O/w32_c$c.jsonl > $O/bench_w32_c$c.log 2>&1
  echo "bwd_weights calls $c: rc $? $(t)"
done
timeout 200 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 256 --dtype bf16 --layout nhwc \
  --direction fwd --runs 10 --only 'gpu:wgmma_*,gpu:tc_*,cudnn:*' --json $O/f256_c1.jsonl > $O/bench_f256_c1.log 2>&1
echo "fwd b256: rc $? $(t)"
for f in w32_c1 w32_c8 f256_c1; do "$PY" bench/gpu_peer.py $O/$f.jsonl > $O/peer_$f.log 2>&1; echo "peer $f $(t)"; grep -A6 "^geomean" $O/peer_$f.log; done
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s15b.tgz s15b
