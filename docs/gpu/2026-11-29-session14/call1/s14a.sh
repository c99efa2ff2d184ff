#!/bin/bash
# Session 14, call 1 (H200): gpu:wgmma_bwd_weights' bulk-copy kernel in pairs (multicast of the
# shared operand): tests default and forced, plans, A/B against PAIR=0 in the same binary,
# memcheck and racecheck.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
timeout 60 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/bulk.log 2>&1
echo "bulk: rc $? $(grep -E '^\[  (PASSED|FAILED)|pairs along' $O/bulk.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -A6 $O/bulk.log | head -30
(time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
for e in CONVGUARD_WGMMA_BWDW_PAIR=0 CONVGUARD_WGMMA_BWDW_BN=192 CONVGUARD_WGMMA_BWDW_BN=256 CONVGUARD_WGMMA_BWDW_CLUSTER=3; do
  env $e timeout 60 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_$e.log 2>&1
  echo "$e: rc $? $(grep -E '^\[  (PASSED|FAILED)|pairs along' $O/bwdw_$e.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
echo "=== timing $(t)"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench; shift 5
  env "$@" timeout 90 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_bwd_weights > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do run w32 32 bwd_weights 30 nopair CONVGUARD_WGMMA_BWDW_PAIR=0; run w32 32 bwd_weights 30 pair X=1; done
python3 devbin/cmp.py $O w32 nopair pair | tee $O/cmp.txt
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 --only gpu:wgmma_bwd_weights 2>&1 | grep plan | uniq > $O/plans.log
cat $O/plans.log
echo "=== sanitizers $(t)"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/memcheck.log 2>&1; tail -3 $O/memcheck.log
timeout 120 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/racecheck.log 2>&1; tail -3 $O/racecheck.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s14a.tgz s14a
