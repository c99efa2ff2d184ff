#!/bin/bash
# Session 18, call 4 (H200): the bulk stores decided by the plan (WgPlan::bulk_stores) rather than at
# launch; the kernel names assert it. gpu_tests, the shape tests under CONVGUARD_WGMMA_WS=5 with the
# stores on and off, memcheck over the new test, the plans printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s18d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
res() { grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|ERROR SUMMARY' $1 | head -8; }
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
timeout 150 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; res $O/tests_all.log
for v in W5 W5S0; do
  case $v in W5) E="CONVGUARD_WGMMA_WS=5";; W5S0) E="CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_BULK_STORE=0";; esac
  env $E timeout 100 db/tests/gpu_tests --gtest_filter="$SHAPES" > $O/tests_$v.log 2>&1; echo "tests $v rc $? $(t)"; res $O/tests_$v.log
done
timeout 90 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyStores' > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; res $O/memcheck.log
for b in 32 256; do for d in fwd bwd_data; do
  CONVGUARD_WGMMA_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs 3 --only gpu:wgmma_implicit_gemm > $O/plan_${d}_b$b.log 2>&1
  echo "plans $d b$b: $(grep -c 'bulk stores' $O/plan_${d}_b$b.log) with bulk stores, $(grep -c 'loaders 5' $O/plan_${d}_b$b.log) on loaders 5"
done; done
echo "total $(t)"
