#!/bin/bash
# Session 28 call 3 (GPU, H200): gpu:wgmma_bwd_weights with C padded to 8-channel chunks (C % 8 !=
# 0, K % 8 == 0): the wgmma backward-weights tests (the ragged test runs its shapes padded and with
# the kRagged loads forced), the property tests, compute-sanitizer memcheck and racecheck on the
# ragged test, then ResNet-50's conv1 backward-weights at b32 (bf16 NHWC): padded, the kRagged
# form (CONVGUARD_WGMMA_BWDW_PAD=0), gpu:tc_bwd_weights, and cuDNN 9.19 through the plugin, and
# the peer (PyTorch under graph replay).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp28.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt
U=/tmp/g/gpu_tests
timeout -k 5 200 $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*:Gpu.EverySolverMatchesTheReferenceOnRandomProblems:Gpu.TensorCoreSolversTakeRandomProblems' > $L/tests.log 2>&1; t "tests rc $?"
CS=/usr/local/cuda/bin/compute-sanitizer
timeout -k 5 150 $CS --tool memcheck $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsRagged' > $L/memcheck.log 2>&1; t "memcheck rc $?"
timeout -k 5 120 $CS --tool racecheck $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsRagged' > $L/racecheck.log 2>&1; t "racecheck rc $?"
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=/tmp/g/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} CONVGUARD_DATA_DIR=$PWD/data
B="/tmp/g/gpu_bench --suite /tmp/g/conv1.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 30"
timeout -k 5 80 $B --only 'gpu:wgmma_bwd_weights,gpu:tc_bwd_weights,cudnn:*' --json $L/conv1.jsonl > $L/conv1.log 2>&1; t "bench rc $?"
CONVGUARD_WGMMA_BWDW_PAD=0 timeout -k 5 60 $B --only 'gpu:wgmma_bwd_weights,gpu:tc_bwd_weights' > $L/conv1_ragged.log 2>&1; t "bench ragged rc $?"
timeout -k 5 60 $B --only 'gpu:wgmma_bwd_weights,gpu:tc_bwd_weights' > $L/conv1_again.log 2>&1; t "bench again rc $?"
timeout -k 5 60 $PY bench/gpu_peer.py $L/conv1.jsonl > $L/peer_conv1.log 2>&1; t "peer rc $?"
cat $L/times.log
grep -E "OK \]|FAILED|PASSED" $L/tests.log | head -30
tail -3 $L/memcheck.log; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard" $L/racecheck.log | head -5
grep -E "gpu:|conv1" $L/conv1.log | head -12; grep -E "gpu:" $L/conv1_ragged.log $L/conv1_again.log | head -10
grep -E "conv1|gpu:" $L/peer_conv1.log | head -10
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
