#!/usr/bin/env bash
# Device call 1 (branch gpubf16): the in-place filter path's correctness. Resource usage of the
# kFilterMn kernels (spills), the GPU tests with the default plans, the backward-data tests with
# the flip forced (CONVGUARD_WGMMA_BWD_FLIP=1: the fallback still verifies), the sabotage build
# (transposed indexing broken), then compute-sanitizer memcheck and racecheck over the wgmma
# backward-data tests. Binaries in devbin-bf16/ (flat, lib/ with libfmt.so.9).
set -u
D=devbin-bf16
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
for f in $D/*.gz $D/base/*.gz; do [[ -e $f ]] && gunzip -kf "$f"; done; chmod +x $D/gpu_* $D/base/gpu_* 2>/dev/null
L=$OUT/l; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
# Registers and stack (spills) of every wgmma_forward instantiation, the kFilterMn ones marked.
cuobjdump --dump-resource-usage $D/gpu_tests 2>&1 | grep -A1 "Function.*wgmma_forward" >"$L/resource_raw.txt"
python3 - "$L/resource_raw.txt" <<'PY' | tee "$L/resource.txt"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
rows = []
for i, l in enumerate(lines):
    if "Function" in l and i + 1 < len(lines):
        m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", lines[i + 1])
        if m:
            rows.append((l.split("Function")[1].strip(" :"), m.groups()))
print("wgmma_forward instantiations: %d; with STACK or LOCAL > 0: %d" % (
    len(rows), sum(1 for _, g in rows if int(g[1]) or int(g[3]))))
for name, g in rows:
    if int(g[1]) or int(g[3]):
        print("  spill:", name[:160], g)
PY
( time timeout 200 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "wgmma|FAIL|PASSED|SKIPPED|real|Failure" "$L/gpu_tests.log" | head -40
F='Gpu.TensorCoreWgmmaBackwardDataOnItsShapes:Gpu.TensorCoreWgmmaBackwardDataFilterInPlace:Gpu.LargeLayers*'
CONVGUARD_WGMMA_BWD_FLIP=1 timeout 150 $D/gpu_tests --gtest_filter="$F" 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests_flip.log"
echo "flip forced rc $?: $(grep -E 'PASSED|FAILED' "$L/gpu_tests_flip.log" | head -3 | tr '\n' ' ')"
timeout 150 $D/gpu_tests_sabotage --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace:Gpu.LargeLayers*' > "$L/sabotage.log" 2>&1
echo "sabotage rc $?"; grep -E "FAILED|PASSED|verified on" "$L/sabotage.log" | head -8
S='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace:Gpu.TensorCoreWgmmaBackwardDataWorkspace'
SM='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace*:Gpu.TensorCoreWgmmaBackwardDataWorkspace'
for tool in memcheck racecheck; do
  f=$S; [[ $tool == memcheck ]] && f=$SM  # racecheck leaves out the wide tiles (large layers)
  timeout 170 compute-sanitizer --tool $tool --print-limit 5 $D/gpu_tests --gtest_filter="$f" > "$L/$tool.log" 2>&1
  echo "$tool rc $?: $(tail -3 "$L/$tool.log" | tr '\n' ' ')"
done
tar czf "$OUT/logs.tgz" -C "$OUT" l
