#!/bin/bash
# Session 8, call 1: verify HEAD's GPU kernels (tests, forced bulk-copy loaders, sanitizers, chaos).
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}/v1; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv > $O/gpu.txt 2>&1; cat $O/gpu.txt
echo "=== gpu_tests"; (time timeout 200 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|SKIPPED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A5 $O/gpu_tests.log | head -30
F='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaWaveCounting:Gpu.LargeLayersVerifyBySampling'
for ws in 4 5; do
  CONVGUARD_WGMMA_WS=$ws timeout 150 db/tests/gpu_tests --gtest_filter="$F" > $O/ws$ws.log 2>&1
  echo "ws=$ws: $(grep -E 'PASSED|FAILED' $O/ws$ws.log | tr '\n' ' ')"
done
for tool in memcheck racecheck; do
  (time timeout 170 compute-sanitizer --tool $tool --print-limit 5 db/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmma*' ) > $O/$tool.log 2>&1
  echo "$tool rc $?: $(tail -4 $O/$tool.log | tr '\n' ' ')"
done
rm -f /tmp/chaos.db*
timeout 60 db/convguard probe --device cuda:0 --db /tmp/chaos.db --plugin db/convguard_chaos_gpu.so \
  --solvers 'gpu:chaos_hang,gpu:chaos_oob,gpu:naive,gpu:implicit_gemm' --problem mb1ic3ih8oc4kh3ph1 \
  --timeout 5 > $O/chaos.log 2>&1; echo "chaos rc $?"; tail -6 $O/chaos.log
tar czf ${OUT:-out}/v1.tgz -C ${OUT:-out} v1
