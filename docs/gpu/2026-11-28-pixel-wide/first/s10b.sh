#!/bin/bash
# Session 10, call 2 (H200): pixel-wide tiles (wgmma_pixel_wide.cuh). Tests (default plans; the
# shape tests with widths forced), memcheck and racecheck over the new test, then own kernels timed
# against HEAD's (b7fe1dd) interleaved, and the b32 forward peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10b; mkdir -p $O ${OUT:-out}
PY=/opt/torch/.venv/bin/python3; [ -x $PY ] || PY=python3
if [ -z "${SKIP_TESTS:-}" ]; then
echo "=== gpu_tests"; (time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -40
for w in 96 192 256; do
  CONVGUARD_WGMMA_PIXELS=$w timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopyLoads:Gpu.LargeLayersVerifyBySampling' > $O/forced_$w.log 2>&1
  echo "pixels $w: $(grep -E 'PASSED|FAILED' $O/forced_$w.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/forced_$w.log | head -12
done
echo "=== sanitizers; $(( $(date +%s) - S )) s"
timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaPixelWideTiles' > $O/memcheck.log 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $O/memcheck.log | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaPixelWideTiles' > $O/racecheck.log 2>&1
echo "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $O/racecheck.log | tr '\n' ' ')"
fi
echo "=== timing; $(( $(date +%s) - S )) s"
run() {  # tag batch dir runs variant
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  CONVGUARD_WGMMA_PLAN=$([ $r = 1 ] && [ $v = new ] && echo 1 || echo 0) timeout 60 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "b32 32 fwd 30" "b256 256 fwd 10"; do set -- $t
    run $1 $2 $3 $4 old; run $1 $2 $3 $4 new
  done
done
for t in b32 b256; do python3 devbin/cmp.py $O $t old new | tee -a $O/cmp.txt; done
echo "=== peer b32 fwd; $(( $(date +%s) - S )) s"
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction fwd --runs 30 --json $O/peer.jsonl > $O/peer_gpu_bench.log 2>&1
timeout 200 $PY bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
head -1 $O/peer.log; grep -A12 '^geomean' $O/peer.log | grep -E 'geomean|wgmma'
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s10b.tgz s10b
