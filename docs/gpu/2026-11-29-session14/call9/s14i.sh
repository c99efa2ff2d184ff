#!/bin/bash
# Session 14, call 9 (H200): the cluster epilogue's last barrier relaxed (arrive.relaxed: no wait
# for the block's global stores): backward-weights tests, racecheck, A/B against call 4's binary.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14i; mkdir -p $O ${OUT:-out}
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
timeout 60 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw.log 2>&1
echo "bwdw: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw.log | tr '\n' ' ') $(( $(date +%s) - S )) s"; grep -E 'Failure' -A6 $O/bwdw.log | head -20
CONVGUARD_WGMMA_BWDW_TMA=0 timeout 60 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_tma0.log 2>&1
echo "tma0: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_tma0.log | tr '\n' ' ')"
run() { local v=$1 G=db/bench/gpu_bench; [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 60 $G --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 30 --only gpu:wgmma_bwd_weights > $O/w32_${v}_r$r.log 2>&1 || echo "rc $? $v"; }
for r in 1 2 3; do run old; run new; done
python3 devbin/cmp.py $O w32 old new | tee $O/cmp_w32.txt | tail -1
timeout 60 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsClusters' > $O/racecheck.log 2>&1; tail -1 $O/racecheck.log
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s14i.tgz s14i
