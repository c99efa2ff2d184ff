#!/bin/bash
# Session 10, call 4 (H200): pixel-wide tiles for stride-1 backward-data (the filter in place as
# MN-major A), x by tiled copies for forward 1x1 only, the 128 x 64 one-wave rule. Tests (forced
# widths on the backward-data shapes too), memcheck and racecheck; timed against call 3's binary
# (old: pixel-wide forward, plain x in both directions), interleaved; the b32 peer, fwd + bwd_data.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10d; mkdir -p $O ${OUT:-out}
PY=/opt/torch/.venv/bin/python3; [ -x $PY ] || PY=python3
echo "=== gpu_tests"; (time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
for w in 96 192 256; do
  CONVGUARD_WGMMA_PIXELS=$w timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataOnItsShapes:Gpu.TensorCoreWgmmaBackwardDataFilterInPlace*:Gpu.TensorCoreWgmmaBulkCopyBackwardData' > $O/forced_$w.log 2>&1
  echo "pixels $w: $(grep -E 'PASSED|FAILED' $O/forced_$w.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/forced_$w.log | head -12
done
timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaPixelWideTiles' > $O/memcheck.log 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $O/memcheck.log | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaPixelWideTiles' > $O/racecheck.log 2>&1
echo "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $O/racecheck.log | tr '\n' ' ')"
echo "=== timing; $(( $(date +%s) - S )) s"
run() {  # tag batch dir runs variant
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 60 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "d32 32 bwd_data 30" "b32 32 fwd 30" "d256 256 bwd_data 10"; do set -- $t
    run $1 $2 $3 $4 old; run $1 $2 $3 $4 new
  done
done
for t in d32 b32 d256; do python3 devbin/cmp.py $O $t old new | tee -a $O/cmp.txt | tail -1; done
CONVGUARD_WGMMA_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 2 --only gpu:wgmma_implicit_gemm > $O/plans_d32.log 2>&1
echo "=== peer b32 fwd + bwd_data; $(( $(date +%s) - S )) s"
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
for d in fwd bwd_data; do
timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction $d --runs 30 --json $O/peer.jsonl >> $O/peer_gpu_bench.log 2>&1
done
timeout 200 $PY bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
head -1 $O/peer.log; grep -A12 '^geomean' $O/peer.log | grep -E 'wgmma'
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s10d.tgz s10d
