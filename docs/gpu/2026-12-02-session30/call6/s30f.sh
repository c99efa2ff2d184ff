#!/bin/bash
# Session 30 call 6 (GPU, H200): the read-through's mend (devbin/ORIGIN): gpu:tc_bwd_weights and
# its TF32 variant's tests again (2D and 3D shapes, determinism, the TF32 accuracy test, declines,
# the random property set), no sanitizer (call 5 ran them on the same kernel code but two reordered
# statements).
set -u
L=$OUT/logs; mkdir -p $L
cp devbin/ORIGIN $L/
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib
F='Gpu.TensorCoreBackwardWeights*:Gpu.TensorCore3DBackwardWeights:Gpu.Tf32VariantIsNotFp32Accurate'
F="$F:Gpu.TensorCoreBackwardDeclinesWithReasons:Gpu.EverySolverMatchesTheReferenceOnRandomProblems"
timeout -k 5 300 /tmp/g/gpu_tests --gtest_filter="$F" > $L/tests.log 2>&1; echo "tests rc $?" > $L/times.log
cat $L/times.log
grep -E '^\[  (FAILED|PASSED|  OK) |tc_bwd_weights' $L/tests.log | head -30
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
