#!/bin/bash
# Session 10, call 3 (H200): 1x1 stride-1 layers' x read by tiled copies (WgArgs::plain_x) against
# the im2col copies (CONVGUARD_WGMMA_IM2COL=1), interleaved; pixel-wide widths forced at b32;
# tests; the b32 forward and backward-data peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10c; mkdir -p $O ${OUT:-out}
PY=/opt/torch/.venv/bin/python3; [ -x $PY ] || PY=python3
echo "=== gpu_tests"; (time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
for v in "CONVGUARD_WGMMA_WS=4" "CONVGUARD_WGMMA_WS=5" "CONVGUARD_WGMMA_PIXELS=128"; do
  env $v timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBackwardDataOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*' > $O/forced_${v#*=}_${v%%=*}.log 2>&1
  echo "$v: $(grep -E 'PASSED|FAILED' $O/forced_${v#*=}_${v%%=*}.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/forced_${v#*=}_${v%%=*}.log | head -12
done
timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaPixelWideTiles' > $O/memcheck.log 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $O/memcheck.log | tr '\n' ' ')"
echo "=== timing; $(( $(date +%s) - S )) s"
run() {  # tag batch dir runs variant env...
  local tag=$1 b=$2 d=$3 n=$4 v=$5; shift 5
  env "$@" timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "b32 32 fwd 30" "d32 32 bwd_data 30" "b256 256 fwd 10"; do set -- $t
    run $1 $2 $3 $4 im2col CONVGUARD_WGMMA_IM2COL=1; run $1 $2 $3 $4 plain X=1
  done
  for w in 96 128 192 256; do run b32 32 fwd 30 p$w CONVGUARD_WGMMA_PIXELS=$w; done
done
for t in b32 d32 b256; do python3 devbin/cmp.py $O $t im2col plain | tee -a $O/cmp.txt | tail -1; done
python3 devbin/cmp.py $O b32 plain p96 p128 p192 p256 > $O/cmp_pixels.txt; tail -1 $O/cmp_pixels.txt
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
tar -C /tmp -czf ${OUT:-out}/s10c.tgz s10c
