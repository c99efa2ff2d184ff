#!/bin/bash
# Session 15, call 1 (H200): b234b52 (HEAD) verified: gpu_tests whole, the reviewed odd-output test
# under memcheck, backward-weights forced variants.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s15a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 200 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
grep -E 'OddOutput' $O/gpu_tests.log
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOddOutputChannels' > $O/memcheck.log 2>&1; echo "memcheck rc $?"; tail -2 $O/memcheck.log
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for e in CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_CLUSTER=1; do
  env $e timeout 60 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw_$e.log 2>&1
  echo "$e: rc $? $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw_$e.log | tr '\n' ' ')"; done
timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_data --runs 5 --calls 2 --only 'gpu:wgmma_*' > $O/bench_calls.log 2>&1; echo "bench rc $?"; tail -5 $O/bench_calls.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s15a.tgz s15a
