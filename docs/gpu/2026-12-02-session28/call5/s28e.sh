#!/bin/bash
# Session 28 call 5 (GPU, H200): the final build after review (padded problems on clusters, on the
# bulk-copy kernel and on a single row added to the ragged test; the workspace's bound; the test's
# environment restored): the whole gpu_tests binary, then memcheck and racecheck on the ragged test.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp28.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib
U=/tmp/g/gpu_tests
timeout -k 5 300 $U > $L/gpu_tests.log 2>&1; t "gpu_tests rc $?"
CS=/usr/local/cuda/bin/compute-sanitizer
timeout -k 5 150 $CS --tool memcheck $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsRagged' > $L/memcheck.log 2>&1; t "memcheck rc $?"
timeout -k 5 120 $CS --tool racecheck $U --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeightsRagged' > $L/racecheck.log 2>&1; t "racecheck rc $?"
cat $L/times.log
grep -E "FAILED|PASSED|Failure" $L/gpu_tests.log | head -20; grep -E "WgmmaBackwardWeightsRagged" $L/gpu_tests.log
tail -3 $L/memcheck.log; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/racecheck.log | head -3
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
