#!/bin/bash
# Session 9, call 5 (H200): the wave rule for persistent 128 x 256; tests; backward-data and forward b32 timed
# against HEAD; the backward-data b32 peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s9e; mkdir -p $O ${OUT:-out}
echo "=== gpu_tests"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -20
CONVGUARD_WGMMA_TILE=128x256 timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataWorkspace' 2>&1 | grep -E 'SKIPPED|PASSED|FAILED' | head -3
run() {  # tag batch dir runs variant
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 120 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "d32 32 bwd_data 30" "b32 32 fwd 30" "d256 256 bwd_data 10"; do set -- $t
    run $1 $2 $3 $4 old; run $1 $2 $3 $4 new
  done
done
for t in d32 b32 d256; do python3 devbin/cmp.py $O $t old new | tee -a $O/cmp.txt | tail -1; done
echo "=== peer; $(( $(date +%s) - S )) s so far"
CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 30 --json $O/peer.jsonl > $O/peer_gpu_bench.log 2>&1
timeout 200 python3 bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
grep -A30 '^geomean' $O/peer.log | grep wgmma
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s9e.tgz s9e
