#!/bin/bash
# Session 17, call 5 (H200): after the final read's cleanup (tc::phase_pixel_at shared by the
# epilogues and store_zeros; the persistent walk's dead zero branch in consume compiled out):
# all gpu_tests; the shape tests with the bulk-copy loaders forced (4: the phased cp.async grid's
# store_zeros) and the walk forced on and off; memcheck over the strided test.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}/s17e; mkdir -p $O
t() { echo "$(( $(date +%s) - S )) s"; }
G=db/tests/gpu_tests
timeout 150 $G > $O/gpu_tests_all.log 2>&1; echo "all tests rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/gpu_tests_all.log | head
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
for e in CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_PHASED=0 CONVGUARD_WGMMA_PHASED=1; do
  env $e timeout 120 $G --gtest_filter="$SHAPES" > $O/$e.log 2>&1; echo "$e rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |Failure' $O/$e.log | head -4
done
timeout 90 compute-sanitizer --tool memcheck --print-limit 5 $G --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; tail -2 $O/memcheck.log
echo "total $(t)"
cd $O && tar -czf ../s17e_logs.tgz . && cd - >/dev/null && rm -rf $O
