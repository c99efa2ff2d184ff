#!/bin/bash
# Session 30 call 5 (GPU, H200): the reviewed gpu:tc_bwd_weights:tf32 (devbin/ORIGIN names the
# commit the binaries were built from): the TF32 and determinism tests that now take it, its shape
# and 3D tests, then memcheck and racecheck on the 3D backward-weights test (the f32 3D kernels
# were not under a sanitizer in call 1).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
cp devbin/ORIGIN $L/
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib
F='Gpu.Tf32VariantIsNotFp32Accurate:Gpu.TensorCoreBackwardWeightsIsDeterministic'
F="$F:Gpu.TensorCoreBackwardWeightsTf32OnItsShapes:Gpu.TensorCore3DBackwardWeights"
timeout -k 5 200 /tmp/g/gpu_tests --gtest_filter="$F" > $L/tests.log 2>&1; t "tests rc $?"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout -k 5 200 $CS --tool memcheck --error-exitcode 9 /tmp/g/gpu_tests \
  --gtest_filter='Gpu.TensorCore3DBackwardWeights' > $L/memcheck3d.log 2>&1; t "memcheck rc $?"
timeout -k 5 170 $CS --tool racecheck --error-exitcode 9 /tmp/g/gpu_tests \
  --gtest_filter='Gpu.TensorCore3DBackwardWeights' > $L/racecheck3d.log 2>&1; t "racecheck rc $?"
cat $L/times.log
grep -E '^\[  (FAILED|PASSED|  OK) |verified on|TF32 relative' $L/tests.log | head -30
tail -n 3 $L/memcheck3d.log; tail -n 3 $L/racecheck3d.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
