#!/bin/bash
# Session 13, call 4 (H200): 192- and 256-wide tiles on gpu:wgmma_bwd_weights' bulk-copy kernel,
# the split reduction at most 8 splits back to a thread per quad; tests default and forced,
# sanitizers; timed against call 1's binary (old), with tile widths and splits forced.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for e in CONVGUARD_WGMMA_BWDW_BN=192 CONVGUARD_WGMMA_BWDW_BN=256 CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_TMA=1; do
  env $e timeout 90 db/tests/gpu_tests --gtest_filter="$B:Gpu.LargeLayersVerifyBySampling" > $O/bwdw_$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
CONVGUARD_WGMMA_BWDW_BN=256 CONVGUARD_WGMMA_BWDW_CLUSTER=3 timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_bn256_cl3.log 2>&1
echo "bn256 cluster3: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_bn256_cl3.log | tr '\n' ' ')"
echo "=== timing $(t)"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench; shift 5
  [ $v = old ] && G=db/old/bench/gpu_bench
  env "$@" timeout 90 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_bwd_weights > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  run w32 32 bwd_weights 30 old X=1; run w32 32 bwd_weights 30 new X=1
  run w32 32 bwd_weights 30 bn192 CONVGUARD_WGMMA_BWDW_BN=192; run w32 32 bwd_weights 30 bn256 CONVGUARD_WGMMA_BWDW_BN=256
  run w32 32 bwd_weights 30 s16 CONVGUARD_WGMMA_BWDW_SPLIT=16; run w32 32 bwd_weights 30 s64 CONVGUARD_WGMMA_BWDW_SPLIT=64
  run w32 32 bwd_weights 30 cl4 CONVGUARD_WGMMA_BWDW_CLUSTER=4
done
python3 devbin/cmp.py $O w32 old new bn192 bn256 s16 s64 cl4 | tee $O/cmp.txt
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 --only gpu:wgmma_bwd_weights 2>&1 | grep plan | uniq > $O/plans.log
echo "=== sanitizers $(t)"
CONVGUARD_WGMMA_BWDW_BN=256 timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/memcheck_bn256.log 2>&1; tail -2 $O/memcheck_bn256.log
CONVGUARD_WGMMA_BWDW_BN=192 timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/memcheck_bn192.log 2>&1; tail -2 $O/memcheck_bn192.log
CONVGUARD_WGMMA_BWDW_BN=192 timeout 120 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/racecheck_bn192.log 2>&1; tail -2 $O/racecheck_bn192.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13d.tgz s13d
