#!/bin/bash
# Session 17, call 3 (H200): the committed kernels' checks that touch gpu:wgmma_implicit_gemm
# (scripts/gpu_check.sh's tests part without the backward-weights, chaos and transform steps,
# which this change does not touch): all gpu_tests; the strided walk test, memcheck and
# racecheck over it; the shape tests with each loader, the walk off/on, pixel-wide widths and
# M-fastest order forced; memcheck over every wgmma test.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}/s17c; mkdir -p $O
t() { echo "$(( $(date +%s) - S )) s"; }
G=db/tests/gpu_tests
timeout 150 $G > $O/gpu_tests_all.log 2>&1; echo "all tests rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/gpu_tests_all.log | head
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 5 $G --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/$tool.log 2>&1; echo "$tool rc $? $(t)"; tail -3 $O/$tool.log
done
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
forced() {  # var values filter tag
  for v in $2; do
    env "$1=$v" timeout 120 $G --gtest_filter="$3" > $O/$4$v.log 2>&1; echo "$1=$v rc $? $(t)"
    grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/$4$v.log | head -6
  done
}
forced CONVGUARD_WGMMA_WS "0 4 5" "$SHAPES:Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.TensorCoreWgmmaWaveCounting:Gpu.TensorCoreWgmmaTwoPerSmIsDeterministic" ws
forced CONVGUARD_WGMMA_PHASED "0 1" "$SHAPES" phased
forced CONVGUARD_WGMMA_PIXELS "96 192" "$SHAPES" pixels
forced CONVGUARD_WGMMA_ORDER "1" 'Gpu.TensorCoreWgmma*:Gpu.LargeLayersVerifyBySampling' order
timeout 200 compute-sanitizer --tool memcheck --print-limit 5 $G --gtest_filter='Gpu.TensorCoreWgmma*' > $O/memcheck_wgmma.log 2>&1; echo "memcheck wgmma rc $? $(t)"; tail -3 $O/memcheck_wgmma.log
echo "total $(t)"
cd $O && tar -czf ../s17c_logs.tgz . && cd - >/dev/null && rm -rf $O
