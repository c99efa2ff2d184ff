#!/usr/bin/env bash
# What runs on the GPU machine (docs/gpu.md): the GPU tests, the probe's GPU scenarios with the
# chaos_gpu plugin, a GPU probe of the standard suite, and the GPU benchmark. Build here first
# (cmake --build build/release), then run with the build folder carried:
#   run(command="bash scripts/gpu_check.sh", carry=["build/release"])
# Logs go to $OUT (or ./gpu-logs).
set -u
B=${BUILD:-build/release}
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
export CONVGUARD_DATA_DIR=$PWD/data
CG=$B/convguard
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$OUT/gpu.txt"
step() { echo "=== $*"; }

step "gpu tests (every GPU solver on the random property set; large layers sampled)"
timeout 300 "$B/tests/gpu_tests" 2>&1 | tail -15 | tee "$OUT/gpu_tests.log"

step "compute-sanitizer memcheck: the tensor-core solver's shapes"
timeout 300 compute-sanitizer --tool memcheck --print-limit 5 "$B/tests/gpu_tests" \
  --gtest_filter='Gpu.TensorCore*' 2>&1 | tail -4 | tee "$OUT/sanitizer.log"

if [ -z "${QUICK:-}" ]; then
step "chaos_gpu: a hanging kernel and an out-of-bounds write, then a good solver"
rm -f /tmp/chaos.db*
P='mb1ic3ih8oc4kh3ph1'
start=$(date +%s.%N)
timeout 120 "$CG" probe --device cuda:0 --db /tmp/chaos.db --plugin "$B/convguard_chaos_gpu.so" \
  --solvers 'gpu:chaos_hang,gpu:chaos_oob,gpu:naive,gpu:implicit_gemm' --problem "$P" --timeout 5 2>&1 | tee "$OUT/chaos_gpu.log"
echo "elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s" | tee -a "$OUT/chaos_gpu.log"

step "GPU probe of the standard suite: own GPU solvers and cuDNN's solvers (${PROBE_SOLVERS:=gpu:*,cudnn:*}), all directions and dtypes"
rm -f /tmp/gstd.db*
timeout ${PROBE_TIMEOUT:-420} "$CG" probe --device cuda:0 --db /tmp/gstd.db --suite standard \
  --plugin "$B/convguard_cudnn.so" --solvers "$PROBE_SOLVERS" \
  --directions fwd,bwd_data,bwd_weights --dtypes f32,f16,bf16 \
  >"$OUT/gpu_standard.log" 2>&1
tail -4 "$OUT/gpu_standard.log"
"$CG" db export --db /tmp/gstd.db | gzip > "$OUT/gpu_standard.jsonl.gz"

step "the other cuDNN build (PyTorch's) is another device fingerprint"
TORCH_CUDNN=$(python3 -c "import nvidia.cudnn as m; print(list(m.__path__)[0] + '/lib')" 2>&1 | tail -1)
echo "PyTorch's cuDNN: $TORCH_CUDNN"
if [ -n "$TORCH_CUDNN" ]; then
  CONVGUARD_CUDNN_PATH=$TORCH_CUDNN "$CG" probe --device cuda:0 --db /tmp/gstd.db --plugin "$B/convguard_cudnn.so" \
    --solvers 'cudnn:fwd:IMPLICIT_PRECOMP_GEMM' --problem mb1ic3ih32oc64oh32kh3ph1 2>&1 | head -2
fi

fi  # QUICK skips the chaos scenarios, the standard-suite probe and the cuDNN-build check

step "benchmark: own GPU solvers vs every cuDNN algorithm (device events, rotated inputs)"
export CONVGUARD_PLUGINS=$PWD/$B/convguard_cudnn.so
{
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nchw
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 1 --dtype f32 --layout nchw --runs 100
} >"$OUT/gpu_bench.log" 2>&1
grep -A4 "^geomean" "$OUT/gpu_bench.log"
