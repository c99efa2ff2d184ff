#!/bin/bash
# Session 23 call 3: the unit tests on the device host's AVX-512 Xeon (call 2's shards ran past
# 470 s and their logs were lost): the CPU solver tests and the rest apart, under hard deadlines.
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/ut23.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0
U=/tmp/c/unit_tests
SOLVERS='Property.*:Winograd.*:RowsConv.*:Bwdw.*:BwdwGemm.*:Transforms.*'
$U --gtest_list_tests > $OUT/list.txt 2>&1
(timeout -k 5 170 taskset -c 0-3 $U --gtest_filter="$SOLVERS" > $OUT/solvers.log 2>&1; echo "solvers rc $?" >> $OUT/solvers.log) &
(timeout -k 5 170 taskset -c 4-7 $U --gtest_filter="-$SOLVERS" > $OUT/rest.log 2>&1; echo "rest rc $?" >> $OUT/rest.log) &
wait
for f in solvers rest; do
  echo "== $f"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|rc [0-9]+$|tests? ran" $OUT/$f.log | head -20
  echo "last RUN lines:"; grep "^\[ RUN" $OUT/$f.log | tail -2
done
