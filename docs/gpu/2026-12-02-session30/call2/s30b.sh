#!/bin/bash
# Session 30 call 2 (GPU, H200): gpu:tc_bwd_weights:tf32 with its fragments permuted (8- and 16-byte shared loads, 16-byte stores), as call 1.
# Its tests and the tensor-core tests around it, then ResNet-50 b32 f32 NHWC backward-weights with
# gpu_bench (the cuDNN 9.19 plugin on PyTorch's cuDNN, every engine, TF32 and not) and
# bench/gpu_peer.py (PyTorch 2.11 under CUDA-graph replay, TF32 off and on), then memcheck and
# racecheck on the TF32 shape test.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
F='Gpu.TensorCoreBackwardWeights*:Gpu.TensorCore3DBackwardWeights:Gpu.TensorCoreSolversTakeRandomProblems'
F="$F:Gpu.TensorCoreBackwardDeclinesWithReasons:Gpu.EverySolverMatchesTheReferenceOnRandomProblems"
F="$F:Gpu.TensorCoreSolversDeclineSizesBeyondTheirIntArguments:Gpu.LargeLayersVerifyBySampling"
timeout -k 5 240 /tmp/g/gpu_tests --gtest_filter="$F" > $L/tests.log 2>&1; t "tests rc $?"
export CONVGUARD_PLUGINS=/tmp/g/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
timeout -k 5 200 /tmp/g/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc \
  --direction bwd_weights --runs 30 --only 'gpu:tc_bwd_weights:tf32,gpu:simt_gemm,cudnn:*' \
  --json $L/f32_bwdw32.jsonl > $L/f32_bwdw32.log 2>&1; t "bench rc $?"
timeout -k 5 100 $PY bench/gpu_peer.py $L/f32_bwdw32.jsonl > $L/peer_f32_bwdw32.log 2>&1; t "peer rc $?"
unset CONVGUARD_PLUGINS
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout -k 5 150 $CS --tool memcheck --error-exitcode 9 /tmp/g/gpu_tests \
  --gtest_filter='Gpu.TensorCoreBackwardWeightsTf32OnItsShapes' > $L/memcheck.log 2>&1; t "memcheck rc $?"
timeout -k 5 150 $CS --tool racecheck --error-exitcode 9 /tmp/g/gpu_tests \
  --gtest_filter='Gpu.TensorCoreBackwardWeightsTf32OnItsShapes' > $L/racecheck.log 2>&1; t "racecheck rc $?"
cat $L/times.log
grep -E '^\[  (FAILED|PASSED|  OK) |verified on|tf32' $L/tests.log | head -40
grep -E "over [0-9]+ problems" $L/f32_bwdw32.log | head; grep -E "over [0-9]+ problems|flag|geomean" $L/peer_f32_bwdw32.log | head -20
tail -3 $L/memcheck.log $L/racecheck.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
