#!/usr/bin/env bash
# gpu:wgmma_implicit_gemm on the H100, in one device call: SASS check (HGMMA present), the GPU
# tests, the honest peer on ResNet-50 b32 bf16 NHWC forward (gpu_bench + bench/gpu_peer.py, then
# scripts/peer_summary.py: wgmma and tc per layer), compute-sanitizer memcheck and racecheck over
# its shape test. BUILD: a folder with gpu_tests, gpu_bench and convguard_cudnn.so (flat, as
# copied into a carried folder; its lib/ is put on LD_LIBRARY_PATH); PARTS picks the steps.
# Logs under $OUT/l and $OUT/logs.tgz. Built here, then (devbin: a folder .git/info/exclude
# ignores) cp build/release/{convguard,convguard_cudnn.so,tests/gpu_tests,bench/gpu_bench} devbin/,
# libfmt.so.9 into devbin/lib/, and this script beside them:
#   run(command="BUILD=devbin bash devbin/gpu_wgmma.sh", carry=["devbin"])
# DIRECTION (fwd, bwd_data, bwd_weights) and SUITE pick the peer's problems (default: ResNet-50
# forward); bwd_weights compares gpu:wgmma_bwd_weights with gpu:tc_bwd_weights, and its variants
# are auto/N (CONVGUARD_WGMMA_BWDW_SPLIT=N; one tile shape). SAN_TOOLS the sanitizers (default memcheck racecheck),
# SAN_F their test filter.
# PARTS=variants (VARIANTS: TILE or TILE/SPLIT, auto = the plan's choice) times forced tile
# shapes and splits (the tensor-core solvers alone: gpu_bench --only); PARTS=vtests (VTILES) reruns the shape tests with each tile shape forced.
set -u
D=${BUILD:-devbin}
PEER=${PEER:-bench/gpu_peer.py}
SUMMARY=${SUMMARY:-scripts/peer_summary.py}
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
PARTS=${PARTS:-sass tests peer sanitize}
has() { [[ " $PARTS " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
if has sass; then
  { echo "HGMMA count: $(cuobjdump -sass $D/gpu_tests | grep -c HGMMA)"; cuobjdump -sass $D/gpu_tests | grep -m6 -E "HGMMA|WARPGROUP"; } 2>&1 | tee "$L/sass.txt"
fi
if has tests; then
  echo "=== gpu_tests"
  ( time timeout ${TESTS_T:-240} $D/gpu_tests ${TESTS_F:-} ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
  grep -E "wgmma|FAIL|PASSED|SKIPPED|real|Failure|error" "$L/gpu_tests.log" | head -40
fi
if has peer; then
  echo "=== peer"
  PY=/opt/torch/.venv/bin/python3
  CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  CONVGUARD_PLUGINS=$PWD/$D/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 200 \
    $D/gpu_bench --suite ${SUITE:-data/suites/resnet50.txt} --batch 32 --dtype bf16 --layout nhwc \
    --direction ${DIRECTION:-fwd} --runs 30 --json "$L/peer.jsonl" > "$L/peer_gpu_bench.log" 2>&1
  echo "gpu_bench rc $?"
  timeout 200 "$PY" $PEER "$L/peer.jsonl" > "$L/peer.log" 2>&1
  echo "gpu_peer rc $?"
  IDS=; [[ ${DIRECTION:-fwd} == bwd_weights ]] && IDS="gpu:wgmma_bwd_weights gpu:tc_bwd_weights"
  "$PY" $SUMMARY "$L/peer.log" $IDS | tee "$L/summary.txt"
fi
if has variants; then
  # Tile shapes forced (CONVGUARD_WGMMA_TILE; auto: the plan's own choice) on the same layers,
  # own solvers only; scripts/variant_summary.py (VSUMMARY) tabulates wgmma's time per variant.
  # A variant TILE/SPLIT also forces the split count (CONVGUARD_WGMMA_SPLIT).
  TILE_ENV=CONVGUARD_WGMMA_TILE SPLIT_ENV=CONVGUARD_WGMMA_SPLIT
  if [[ ${DIRECTION:-fwd} == bwd_weights ]]; then
    TILE_ENV=CONVGUARD_WGMMA_BWDW_TILE_UNUSED SPLIT_ENV=CONVGUARD_WGMMA_BWDW_SPLIT
  fi
  for t in ${VARIANTS:-auto 128x64 128x128 256x64 256x128 128x256}; do
    tile=${t%%/*} split=; [[ $t == */* ]] && split=${t#*/}
    t=${t/\//s}
    env $TILE_ENV=${tile/auto/} $SPLIT_ENV=$split timeout 120 $D/gpu_bench --suite ${SUITE:-data/suites/resnet50.txt} \
      --batch 32 --dtype bf16 --layout nhwc --direction ${DIRECTION:-fwd} --runs 30 --json "$L/var_$t.jsonl" \
      --only "${VSOLVERS_ONLY:-gpu:wgmma_implicit_gemm,gpu:tc_implicit_gemm,gpu:wgmma_bwd_weights,gpu:tc_bwd_weights}" \
      > /dev/null 2>&1
    echo "variant $t rc $?"
  done
  VS=; [[ ${DIRECTION:-fwd} == bwd_weights ]] && VS="gpu:wgmma_bwd_weights gpu:tc_bwd_weights"
  VSOLVERS=${VS:-gpu:wgmma_implicit_gemm gpu:tc_implicit_gemm} \
    python3 "${VSUMMARY:-scripts/variant_summary.py}" "$L"/var_*.jsonl | tee "$L/variants.txt"
fi
if has vtests; then
  # The shape tests and large layers again with each listed tile shape forced.
  for t in ${VTILES:-256x64 256x128 128x256}; do
    echo "=== tests, tile $t forced"
    CONVGUARD_WGMMA_TILE=$t timeout 120 $D/gpu_tests \
      --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.LargeLayers*' 2>&1 |
      grep -E "wgmma|OK|FAIL|PASSED|Failure" | head
  done
fi
if has sanitize; then
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    echo "=== $tool"
    timeout ${SAN_T:-150} compute-sanitizer --tool $tool --print-limit 5 $D/gpu_tests \
      --gtest_filter="${SAN_F:-Gpu.TensorCoreWgmma*}" > "$L/$tool.log" 2>&1
    echo "rc $?"; tail -4 "$L/$tool.log"
  done
fi
tar czf "$OUT/logs.tgz" -C "$OUT" l
