#!/bin/bash
# Session 14, call 7 (H200): the cluster epilogue's distributed shared-memory loads batched (8
# quads a thread, every rank's loads of a batch in flight together): tests (cluster sizes forced,
# both loaders), racecheck and memcheck, A/B against call 4's binary.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14g; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.LargeLayersVerifyBySampling'
timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw.log 2>&1
echo "bwdw: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -A6 $O/bwdw.log | head -20
for e in CONVGUARD_WGMMA_BWDW_CLUSTER=3 CONVGUARD_WGMMA_BWDW_CLUSTER=8 CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_BN=256; do
  env $e timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_$e.log 2>&1
  echo "$e: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
echo "=== timing $(t)"
run() {  # tag dir runs variant solver
  local tag=$1 d=$2 n=$3 v=$4 s=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 90 $G --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only $s > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2 3; do run w32 bwd_weights 30 old gpu:wgmma_bwd_weights; run w32 bwd_weights 30 new gpu:wgmma_bwd_weights; done
python3 devbin/cmp.py $O w32 old new | tee $O/cmp_w32.txt
echo "=== sanitizers $(t)"
timeout 150 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies:Gpu.TensorCoreWgmmaBackwardWeightsClusters*' > $O/racecheck.log 2>&1; tail -2 $O/racecheck.log
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*' > $O/memcheck.log 2>&1; tail -2 $O/memcheck.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s14g.tgz s14g
