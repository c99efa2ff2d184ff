#!/bin/bash
# Session 25 call 10: the whole GPU test binary of the final build (06b2927) on the H200, under a
# 300 s limit (what it reaches is in the log).
set -u
L=$OUT/logs; mkdir -p $L
tar xJf devbin/gp25.tar.xz || exit 1
timeout -k 5 300 build/release/tests/gpu_tests > $L/gpu_tests_all.log 2>&1; echo "gpu_tests rc $?" >> $L/gpu_tests_all.log
grep -E "^\[  (PASSED|FAILED)|FAILED|rc [0-9]+$" $L/gpu_tests_all.log | head -20; grep -c "OK \]" $L/gpu_tests_all.log; grep "^\[ RUN" $L/gpu_tests_all.log | tail -1
xz $L/gpu_tests_all.log
