#!/usr/bin/env bash
# Device run for branch gpu-odd-channels: gpu_tests, timings against cuDNN, memcheck, racecheck.
set -u
B=devbin-oddch
OUT=${OUT:-gpu-logs}; mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
T0=$(date +%s)
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== gpu_tests (left $(left) s)"
timeout ${TESTS_T:-240} $B/tests/gpu_tests ${TESTS_FILTER:+--gtest_filter=$TESTS_FILTER} >"$OUT/gpu_tests.log" 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s"
grep -vE "^\[ RUN|^$|^\[       OK" "$OUT/gpu_tests.log" | head -70
if [ "${BENCH:-1}" = 1 ]; then
echo "=== bench vs cuDNN (left $(left) s)"
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
for d in fwd bwd_data bwd_weights; do
  CONVGUARD_PLUGINS=$PWD/$B/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 80 \
    $B/bench/gpu_bench --suite $B/$d.txt --batch 32 --dtype bf16 --layout nhwc --direction $d --runs 30 \
    >"$OUT/bench_$d.log" 2>&1
  echo "$d rc $?"; grep -E "^device|^[a-z0-9].*GFLOP|gpu:tc_|gpu:implicit_gemm " "$OUT/bench_$d.log"
done
fi
echo "=== memcheck Gpu.TensorCore* (left $(left) s)"
t=$(( $(left) - ${RACE_T:-120} )); [ $t -gt 20 ] || t=20
timeout $t compute-sanitizer --tool memcheck --print-limit 5 $B/tests/gpu_tests \
  --gtest_filter="${MEM_FILTER:-Gpu.TensorCore*}" >"$OUT/memcheck.log" 2>&1
echo "rc $?"; grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED|tests ran" "$OUT/memcheck.log" | head -12; tail -2 "$OUT/memcheck.log"
echo "=== racecheck ${RACE_FILTER:-Gpu.TensorCoreRagged*} (left $(left) s)"
t=$(left); [ $t -gt 15 ] || t=15
timeout $t compute-sanitizer --tool racecheck --print-limit 5 $B/tests/gpu_tests \
  --gtest_filter="${RACE_FILTER:-Gpu.TensorCoreRagged*}" >"$OUT/racecheck.log" 2>&1
echo "rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|hazard|PASSED|FAILED|tests ran" "$OUT/racecheck.log" | head -12; tail -2 "$OUT/racecheck.log"
echo "done after $(( $(date +%s) - T0 )) s"
