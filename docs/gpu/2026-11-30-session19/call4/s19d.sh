#!/bin/bash
# Session 19, call 4 (H200): the wide-split and pixel-tie rules. gpu_tests; the shape tests under
# WS=4 and with 128 x 256 tiles forced; memcheck over the new test and the random shapes (split ones
# among them; the kernels are unchanged, so no racecheck); the plans of both directions printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
res() { grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|ERROR SUMMARY|RACECHECK SUMMARY' $1 | head -8; }
NEW='Gpu.TensorCoreWgmmaWideSplitsAndPixelTies'
timeout 150 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; res $O/tests_all.log
SHAPES="Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBackwardData*:$NEW"
for v in W4 T256; do
  case $v in W4) E="CONVGUARD_WGMMA_WS=4";; T256) E="CONVGUARD_WGMMA_TILE=128x256";; esac
  env $E timeout 100 db/tests/gpu_tests --gtest_filter="$SHAPES" > $O/tests_$v.log 2>&1; echo "tests $v rc $? $(t)"; res $O/tests_$v.log
done
timeout 200 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter="$NEW:Gpu.TensorCoreWgmmaOnItsShapes" > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; res $O/memcheck.log
for d in fwd bwd_data; do for b in 32 256; do
  CONVGUARD_WGMMA_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs 2 --only gpu:wgmma_implicit_gemm > $O/plan_${d}_b$b.log 2>&1; echo "plan $d $b rc $? $(t)"
done; done
echo "total $(t)"
