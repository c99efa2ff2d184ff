#!/usr/bin/env bash
# Second device run: gpu_tests, A/B timing of the aligned path (bdac83a's gpu_bench_base against
# this branch's gpu_bench, interleaved, tensor-core solvers only), strided backward-data and C = 3
# against cuDNN, memcheck and racecheck over the tensor-core tests.
set -u
B=devbin-oddch
OUT=${OUT:-gpu-logs}; mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
T0=$(date +%s)
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
echo "=== gpu_tests"
timeout 200 $B/tests/gpu_tests >"$OUT/gpu_tests.log" 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s"
grep -vE "^\[ RUN|^$|^\[       OK" "$OUT/gpu_tests.log" | grep -vE "^\[-|^\[=|Global test|Running main" | head -50
echo "=== A/B aligned path, tensor-core solvers only (left $(left) s)"
SKIP='gpu:implicit_gemm,gpu:direct,gpu:naive,gpu:winograd,gpu:tc_implicit_gemm:tf32'
for round in 1 2; do for bin in gpu_bench_base gpu_bench; do for d in fwd bwd_data bwd_weights; do
  CONVGUARD_SKIP_SOLVERS=$SKIP timeout 40 $B/bench/$bin --suite $B/ab.txt --batch 32 --dtype bf16 \
    --layout nhwc --direction $d --runs 50 >"$OUT/ab_${bin}_${d}_$round.log" 2>&1
  echo "round $round $bin $d: $(grep -E '^  gpu:tc' "$OUT/ab_${bin}_${d}_$round.log" | awk '{printf "%s ", $2}')"
done; done; done
echo "=== vs cuDNN (left $(left) s)"
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
for d in fwd bwd_data; do
  CONVGUARD_SKIP_SOLVERS='gpu:implicit_gemm,gpu:direct,gpu:naive,gpu:winograd' \
  CONVGUARD_PLUGINS=$PWD/$B/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 80 \
    $B/bench/gpu_bench --suite $B/$d.txt --batch 32 --dtype bf16 --layout nhwc --direction $d --runs 30 \
    >"$OUT/bench_$d.log" 2>&1
  echo "$d rc $?"; grep -E "^[a-z0-9].*GFLOP|gpu:tc_" "$OUT/bench_$d.log"
done
echo "=== memcheck Gpu.TensorCore* (left $(left) s)"
t=$(( $(left) - 150 )); [ $t -gt 30 ] || t=30
timeout $t compute-sanitizer --tool memcheck --print-limit 5 $B/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCore*' >"$OUT/memcheck.log" 2>&1
echo "rc $?"; grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED" "$OUT/memcheck.log" | head -8
echo "=== racecheck (left $(left) s)"
t=$(( $(left) - 5 )); [ $t -gt 15 ] || t=15
timeout $t compute-sanitizer --tool racecheck --print-limit 5 $B/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCore*:-Gpu.TensorCoreBackwardWeightsIsDeterministic' >"$OUT/racecheck.log" 2>&1
echo "rc $?"; grep -E "RACECHECK SUMMARY|hazard|PASSED|FAILED" "$OUT/racecheck.log" | head -8; tail -3 "$OUT/racecheck.log"
echo "done after $(( $(date +%s) - T0 )) s"
