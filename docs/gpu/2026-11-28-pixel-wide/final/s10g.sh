#!/bin/bash
# Session 10, call 7 (H200): after the review: 1x1 layers padded at the end keep im2col copies;
# forced loaders keep their plans. The tests that cover it, default and forced.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10g; mkdir -p $O ${OUT:-out}
F='Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaPixelWideTiles:Gpu.TensorCoreWgmmaOnItsShapes'
timeout 60 db/tests/gpu_tests --gtest_filter="$F" > $O/tests.log 2>&1; echo "default: $(grep -E 'PASSED|FAILED' $O/tests.log | tr '\n' ' ')"
grep -E 'Failure' -B2 -A8 $O/tests.log | head -20
for ws in 4 5; do CONVGUARD_WGMMA_WS=$ws timeout 50 db/tests/gpu_tests --gtest_filter="$F" > $O/tests_ws$ws.log 2>&1
  echo "ws$ws: $(grep -E 'PASSED|FAILED' $O/tests_ws$ws.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/tests_ws$ws.log | head -12; done
tar -C /tmp -czf ${OUT:-out}/s10g.tgz s10g
