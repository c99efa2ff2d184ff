#!/bin/bash
# Session 13, call 3 (H200): the split reduction's new kernel (groups of splits, coalesced) and
# tiled copies of x for 1x1 stride-1 backward-weights; tests default and forced, sanitizers;
# timed against call 1's binary (old), interleaved.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for e in CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_TMA=1 CONVGUARD_WGMMA_IM2COL=1 CONVGUARD_WGMMA_BWDW_CLUSTER=1 CONVGUARD_WGMMA_BWDW_CLUSTER=3 CONVGUARD_WGMMA_BWDW_CLUSTER=8; do
  env $e timeout 90 db/tests/gpu_tests --gtest_filter="$B:Gpu.LargeLayersVerifyBySampling" > $O/bwdw_$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
echo "=== timing $(t)"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench only=gpu:wgmma_bwd_weights; shift 5
  [ $v = old ] && G=db/old/bench/gpu_bench
  [ $d = bwd_weights ] || only=gpu:wgmma_implicit_gemm
  env "$@" timeout 90 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only $only > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  run w32 32 bwd_weights 30 old X=1; run w32 32 bwd_weights 30 new X=1; run w32 32 bwd_weights 30 im2col CONVGUARD_WGMMA_IM2COL=1
  run b32 32 fwd 30 old X=1; run b32 32 fwd 30 new X=1
  run d32 32 bwd_data 30 old X=1; run d32 32 bwd_data 30 new X=1
done
python3 devbin/cmp.py $O w32 old new im2col | tee $O/cmp.txt
for tg in b32 d32; do python3 devbin/cmp.py $O $tg old new | tee -a $O/cmp.txt | tail -1; done
echo "=== sanitizers $(t)"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*' > $O/memcheck.log 2>&1; tail -2 $O/memcheck.log
timeout 150 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/racecheck.log 2>&1; tail -2 $O/racecheck.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13c.tgz s13c
