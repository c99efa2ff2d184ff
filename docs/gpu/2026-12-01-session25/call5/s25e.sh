#!/bin/bash
# Session 25 call 5 (GPU): gpu:wgmma_bwd_weights' kRagged form (C or K not a multiple of 8, C = 3):
# its tests and the property tests, compute-sanitizer memcheck and racecheck on the ragged shapes,
# and ResNet-50's conv1 backward-weights at b32 (bf16 NHWC) against gpu:tc_bwd_weights and the
# honest peer (cuDNN 9.19 through the plugin, PyTorch under graph replay).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
tar xJf devbin/gp25.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt
U=build/release/tests/gpu_tests
timeout -k 5 200 $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.EverySolverMatchesTheReferenceOnRandomProblems:Gpu.TensorCoreSolversTakeRandomProblems' > $L/tests.log 2>&1; t "tests rc $?"
CS=/usr/local/cuda/bin/compute-sanitizer
timeout -k 5 120 $CS --tool memcheck $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsRagged' > $L/memcheck.log 2>&1; t "memcheck rc $?"
timeout -k 5 100 $CS --tool racecheck $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsRagged' > $L/racecheck.log 2>&1; t "racecheck rc $?"
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/build/release/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
timeout -k 5 80 build/release/bench/gpu_bench --suite devbin/conv1.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 30 --only 'gpu:wgmma_bwd_weights,gpu:tc_bwd_weights,cudnn:*' --json $L/conv1.jsonl > $L/conv1.log 2>&1; t "bench rc $?"
timeout -k 5 60 $PY bench/gpu_peer.py $L/conv1.jsonl > $L/peer_conv1.log 2>&1; t "peer rc $?"
cat $L/times.log
grep -E "verified on|OK \]|FAILED|PASSED" $L/tests.log | head -30
tail -3 $L/memcheck.log; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard" $L/racecheck.log | head -5
grep -E "conv1|gpu:" $L/peer_conv1.log | head -10
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
