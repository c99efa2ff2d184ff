#!/bin/bash
# Device run: the bulk-copy loaders for gpu:wgmma_implicit_gemm:tf32 (f32 stages of 32 channels,
# FLOAT32 tensor maps), forced (CONVGUARD_WGMMA_WS=4): problems against the CPU reference, the TF32
# shape tests, then ResNet-50 b32 f32 NHWC forward against the plan.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
NHWC='--stag=axb --wtag=axb --dtag=axb'
for p in mb2ic64ih14oc128oh14kh3ph1 mb3ic96ih15oc64oh8kh3sh2ph1 mb2ic32ih9oc100oh9kh1 mb2ic128ih20oc36oh16kh3dh1 mb1ic512ih7oc512oh7kh3ph1; do
  CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x128 timeout 30 db/convguard driver --device cuda:0 \
    -S gpu:wgmma_implicit_gemm:tf32 --problem "$NHWC $p" -t 1 -i 3 > $L/drv_$p.log 2>&1
  echo "$p: $(grep -hE 'Verifies|FAILED|rror' $L/drv_$p.log | head -1)"
done
CONVGUARD_WGMMA_WS=4 timeout 150 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.Tf32VariantIsNotFp32Accurate' \
  > $L/tests_ws4.log 2>&1; grep -E 'PASSED|FAILED|Failure' $L/tests_ws4.log | head -5
run() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm:tf32 > $L/$tag.log 2>&1
}
for r in 1 2; do
  run plan_r$r X=1
  run ws4_r$r CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x128
  run ws464_r$r CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x64
done
python3 - "$L" <<'PY' | tee $L/summary.txt
import math, re, sys
d = sys.argv[1]
def parse(f):
    out, name = [], None
    for line in open(f"{d}/{f}.log"):
        if "GFLOP" in line and not line.startswith(" "): name = line.split()[0]
        m = re.match(r"\s+gpu:wgmma\S*\s+([\d.]+) ms", line)
        if m: out.append((name, float(m.group(1))))
    return out
tags = ["plan", "ws4", "ws464"]
v = {t: [parse(f"{t}_r1"), parse(f"{t}_r2")] for t in tags}
best = {t: [min(a[1], b[1]) for a, b in zip(*v[t])] for t in tags}
names = [n for n, _ in v["plan"][0]]
g = {t: 0.0 for t in tags}
for i, n in enumerate(names):
    print(f"{n:28s} " + " ".join(f"{best[t][i]:8.4f}" for t in tags) + f"  plan/ws4 {best['plan'][i] / best['ws4'][i]:.3f}")
    for t in tags: g[t] += math.log(best["plan"][i] / best[t][i])
for t in tags: print(f"geomean plan/{t}: {math.exp(g[t] / len(names)):.4f}")
PY
tar -C $L -czf $OUT/tf32_logs.tgz .
