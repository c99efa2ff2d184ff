#!/bin/bash
# Session 14, call 4 (H200): odd output channels from whole-chunk inputs by cp.async (conv1's
# backward-data); the reverted backward-weights kernel and b364e67's cleanup re-tested; the
# backward-data peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
timeout 60 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOddOutputChannels' > $O/odd.log 2>&1
echo "odd: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/odd.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -A6 $O/odd.log | head -30
(time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for e in CONVGUARD_WGMMA_BWDW_BN=128 CONVGUARD_WGMMA_BWDW_BN=192 CONVGUARD_WGMMA_BWDW_BN=256 CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_CLUSTER=1 CONVGUARD_WGMMA_BWDW_CLUSTER=3; do
  env $e timeout 60 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_$e.log 2>&1
  echo "$e: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOddOutputChannels' > $O/memcheck.log 2>&1; tail -2 $O/memcheck.log
echo "=== timing $(t)"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench; shift 5
  [ $v = old ] && G=db/old/bench/gpu_bench
  env "$@" timeout 90 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do run d32 32 bwd_data 20 old X=1; run d32 32 bwd_data 20 new X=1; done
python3 devbin/cmp.py $O d32 old new | tee $O/cmp.txt
echo "=== peer $(t)"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_data --runs 30 --only 'gpu:wgmma_*,cudnn:*' --json $O/peer.jsonl > $O/bench_bwd_data.log 2>&1
"$PY" bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1; grep -A4 "^geomean" $O/peer.log; grep -A1 "^conv1" $O/peer.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s14d.tgz s14d
