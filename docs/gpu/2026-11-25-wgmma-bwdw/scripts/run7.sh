#!/usr/bin/env bash
# Call 7: the committed binaries (307ac6d): every GPU test, memcheck over the new solver's tests.
set -u
D=devbin-wgbw
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
( time timeout 200 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "wgmma_bwd|PASSED|FAILED|real" "$L/gpu_tests.log"
timeout 100 compute-sanitizer --tool memcheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.TensorCoreBackwardWeightsIsDeterministic:Gpu.WgmmaBackwardWeights*' > "$L/memcheck.log" 2>&1
echo "memcheck rc $?"; grep -E "SUMMARY|PASSED|FAILED" "$L/memcheck.log"
tar czf "$OUT/logs.tgz" -C "$OUT" l
