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

step "chaos_gpu: a hanging kernel and an out-of-bounds write, then a good solver"
rm -f /tmp/chaos.db*
P='mb1ic3ih8oc4kh3ph1'
start=$(date +%s.%N)
timeout 120 "$CG" probe --device cuda:0 --db /tmp/chaos.db --plugin "$B/convguard_chaos_gpu.so" \
  --solvers 'gpu:chaos_hang,gpu:chaos_oob,gpu:naive,gpu:implicit_gemm' --problem "$P" --timeout 5 2>&1 | tee "$OUT/chaos_gpu.log"
echo "elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s" | tee -a "$OUT/chaos_gpu.log"
"$CG" db show --db /tmp/chaos.db --json > "$OUT/chaos_gpu.jsonl"

step "GPU probe of the standard suite, all directions and dtypes"
rm -f /tmp/gstd.db*
timeout 400 "$CG" probe --device cuda:0 --db /tmp/gstd.db --suite standard \
  --directions fwd,bwd_data,bwd_weights --dtypes f32,f16,bf16 2>&1 | tail -120 > "$OUT/gpu_standard.log"
tail -3 "$OUT/gpu_standard.log"
"$CG" db export --db /tmp/gstd.db > "$OUT/gpu_standard.jsonl"
