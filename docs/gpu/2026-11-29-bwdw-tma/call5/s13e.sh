#!/bin/bash
# Session 13, call 5 (H200): gpu:wgmma_bwd_weights' tile width chosen by the plan (128, 192, 256);
# tests default and forced; timed against call 4's binary (128 wide but where 192 makes one wave);
# then the whole honest peer (scripts/gpu_check.sh PARTS=peer).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13e; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for e in CONVGUARD_WGMMA_BWDW_BN=128 CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_CLUSTER=1; do
  env $e timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_$e.log 2>&1
  echo "$e: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_$e.log | head -12; done
echo "=== timing $(t)"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench; shift 5
  [ $v = old ] && G=db/old/bench/gpu_bench
  env "$@" timeout 90 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_bwd_weights > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do run w32 32 bwd_weights 30 old X=1; run w32 32 bwd_weights 30 new X=1; done
python3 devbin/cmp.py $O w32 old new | tee $O/cmp.txt
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 --only gpu:wgmma_bwd_weights 2>&1 | grep plan | uniq > $O/plans.log
echo "=== peer $(t)"
( time OUT=$O/peer BUILD=db PARTS=peer timeout 400 bash scripts/gpu_check.sh ) > $O/peer_step.log 2>&1
tail -14 $O/peer_step.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13e.tgz s13e
