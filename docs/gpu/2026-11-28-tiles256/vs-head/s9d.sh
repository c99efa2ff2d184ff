#!/bin/bash
# Session 9, call 4 (H200): the new default (N-fastest tiles, 128 x 256 on the bulk-copy loaders)
# verified (tests, M order, memcheck with 128 x 256 forced) and timed against HEAD (7898f82)
# interleaved; the peer for bf16 b32 forward and backward-data and b256 forward.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s9d; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt 2>&1
echo "=== gpu_tests"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -20
CONVGUARD_WGMMA_ORDER=1 timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.LargeLayersVerifyBySampling' > $O/order_m.log 2>&1
echo "order M: $(grep -E 'PASSED|FAILED' $O/order_m.log | tr '\n' ' ')"
echo "=== memcheck, 128 x 256 forced; $(( $(date +%s) - S )) s"
CONVGUARD_WGMMA_TILE=128x256 timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaBulkCopy*' > $O/memcheck.log 2>&1
tail -3 $O/memcheck.log
echo "=== timing; $(( $(date +%s) - S )) s so far"
run() {  # tag batch dir runs variant
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 120 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "b32 32 fwd 30" "b256 256 fwd 10" "d32 32 bwd_data 30" "d256 256 bwd_data 10"; do set -- $t
    run $1 $2 $3 $4 old; run $1 $2 $3 $4 new
  done
done
for t in b32 b256 d32 d256; do python3 devbin/cmp.py $O $t old new | tee -a $O/cmp.txt | tail -1; done
echo "=== peer; $(( $(date +%s) - S )) s so far"
CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
for t in "32 fwd 30" "32 bwd_data 30" "256 fwd 10"; do set -- $t
  timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $1 --dtype bf16 --layout nhwc \
    --direction $2 --runs $3 --json $O/peer.jsonl >> $O/peer_gpu_bench.log 2>&1
done
echo "bench done $(( $(date +%s) - S )) s"
timeout 200 python3 bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
grep -A30 '^geomean' $O/peer.log | grep wgmma
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s9d.tgz s9d
