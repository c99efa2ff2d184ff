#!/bin/bash
# Session 21, call 5 (H200): as call 4, with the overlap kept to reduction grids of at least half
# the SMs' count (res2a_branch2a's 32 blocks lost 7% overlapped). gpu_tests; memcheck over the
# split tests; the A/B on backward-weights b32; the peer on backward-weights b32 alone and 8 calls
# back to back.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin21.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s21e; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
timeout 240 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; tail -3 $O/tests_all.log
timeout 150 compute-sanitizer --tool memcheck db/tests/gpu_tests --gtest_filter='*WgmmaBackwardWeights*:*WideSplits*' > $O/memcheck.log 2>&1
echo "memcheck rc $? $(t)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
ab() {  # name direction
  for r in 1 2 3; do
    for v in pdl plain; do
      if [ $v = plain ]; then export CONVGUARD_REDUCE_PLAIN=1; else unset CONVGUARD_REDUCE_PLAIN; fi
      timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
        --direction $2 --runs 20 --calls 1 --only 'gpu:wgmma_*' > $O/ab_$1_${v}_r$r.log 2>&1
    done
  done
  unset CONVGUARD_REDUCE_PLAIN
  echo "ab $1 $(t)"
}
ab w32 bwd_weights
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
peer() {  # name direction batch runs calls limit
  timeout $6 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $3 --dtype bf16 --layout nhwc \
    --direction $2 --runs $4 --calls $5 --only 'gpu:wgmma_*,cudnn:*' --json $O/$1.jsonl > $O/bench_$1.log 2>&1
  echo "$1: rc $? $(t)"
  "$PY" bench/gpu_peer.py $O/$1.jsonl > $O/peer_$1.log 2>&1; grep -A3 "^geomean" $O/peer_$1.log | tail -2
}
peer w32_c1 bwd_weights 32 30 1 160
peer w32_c8 bwd_weights 32 8 8 220
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s21e.tar.xz s21e
