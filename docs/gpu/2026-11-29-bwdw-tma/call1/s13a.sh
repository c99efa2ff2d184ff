#!/bin/bash
# Session 13, call 1 (H200): session 10's review fixes (s10g); gpu:wgmma_bwd_weights' bulk-copy
# loader: its tests default and forced, sanitizers, and timed against the cp.async kernel.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13a; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt 2>&1
t() { echo "$(( $(date +%s) - S )) s"; }
F='Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaPixelWideTiles:Gpu.TensorCoreWgmmaOnItsShapes'
timeout 60 db/tests/gpu_tests --gtest_filter="$F" > $O/s10g.log 2>&1; echo "s10g default: $(grep -E '^\[  (PASSED|FAILED)' $O/s10g.log | tr '\n' ' ') $(t)"
for ws in 4 5; do CONVGUARD_WGMMA_WS=$ws timeout 50 db/tests/gpu_tests --gtest_filter="$F" > $O/s10g_ws$ws.log 2>&1
  echo "s10g ws$ws: $(grep -E '^\[  (PASSED|FAILED)' $O/s10g_ws$ws.log | tr '\n' ' ')"; done
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw.log 2>&1
echo "bwdw default: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/bwdw.log | head -40
for v in 0 1; do CONVGUARD_WGMMA_BWDW_TMA=$v timeout 90 db/tests/gpu_tests --gtest_filter="$B:Gpu.LargeLayersVerifyBySampling" > $O/bwdw_tma$v.log 2>&1
  echo "bwdw tma$v: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_tma$v.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/bwdw_tma$v.log | head -16; done
for cz in 1 3; do CONVGUARD_WGMMA_BWDW_CLUSTER=$cz timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_cl$cz.log 2>&1
  echo "bwdw cluster$cz: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_cl$cz.log | tr '\n' ' ')"; done
echo "=== timing $(t)"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5; shift 5
  env "$@" timeout 90 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_bwd_weights > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  run w32 32 bwd_weights 30 old CONVGUARD_WGMMA_BWDW_TMA=0; run w32 32 bwd_weights 30 new X=1; run w32 32 bwd_weights 30 all CONVGUARD_WGMMA_BWDW_TMA=1
done
python3 devbin/cmp.py $O w32 old new all | tee $O/cmp.txt
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 --only gpu:wgmma_bwd_weights > $O/plans.log 2>&1
echo "=== sanitizers $(t)"
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies:Gpu.TensorCoreWgmmaBackwardWeightsClusters' > $O/memcheck.log 2>&1; tail -3 $O/memcheck.log
timeout 170 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsBulkCopies' > $O/racecheck.log 2>&1; tail -3 $O/racecheck.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13a.tgz s13a
