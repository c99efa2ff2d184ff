#!/bin/bash
# Session 21, call 8 (H200): the commit's build: the reduction pass's programmatic launch (after
# each block's tile) where its grid has at least half the SMs' count of blocks. gpu_tests; memcheck
# and racecheck over the split tests; A/B against plain launches on backward-weights b32, four
# rounds; the peer on backward-weights b32 alone.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin21.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s21h; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
timeout 240 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; tail -3 $O/tests_all.log
timeout 150 compute-sanitizer --tool memcheck db/tests/gpu_tests --gtest_filter='*WgmmaBackwardWeights*:*WideSplits*' > $O/memcheck.log 2>&1
echo "memcheck rc $? $(t)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
timeout 150 compute-sanitizer --tool racecheck db/tests/gpu_tests --gtest_filter='*WgmmaBackwardWeightsClusters*:*WideSplits*' > $O/racecheck.log 2>&1
echo "racecheck rc $? $(t)"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" $O/racecheck.log | tail -3
ab() {  # name direction
  for r in 1 2 3 4; do
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
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s21h.tar.xz s21h
