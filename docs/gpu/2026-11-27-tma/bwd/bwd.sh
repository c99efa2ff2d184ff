#!/bin/bash
# Device run: the bulk-copy loaders on stride-1 backward-data reading the filter in place
# (CONVGUARD_WGMMA_WS=4|5 forced): a few problems against the CPU reference, the backward-data
# shape tests with each form forced, then each form forced on ResNet-50 b32 bf16 NHWC.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
NHWC='--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb'
for ws in 4 5; do
  for p in mb2ic64ih14oc128oh14kh3ph1 mb2ic200ih9oc64oh9kh3ph1 mb3ic128ih8oc128oh8kh1 mb1ic64ih12oc64oh10kh3 mb2ic64ih10oc64oh12kh3ph2 mb2ic72ih11oc192oh11kh5ph2; do
    CONVGUARD_WGMMA_WS=$ws CONVGUARD_WGMMA_TILE=128x128 timeout 30 db/convguard driver --device cuda:0 \
      -S gpu:wgmma_implicit_gemm --problem "$NHWC $p" -t 1 -i 3 > $L/drv_ws${ws}_$p.log 2>&1
    echo "ws$ws $p: $(grep -hE 'Verifies|FAILED|rror' $L/drv_ws${ws}_$p.log | head -1)"
  done
done
for ws in 4 5; do
  echo "=== backward-data shape tests, WS=$ws forced"
  CONVGUARD_WGMMA_WS=$ws timeout 200 db/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaWaveCounting:Gpu.LargeLayersVerifyBySampling' \
    > $L/tests_ws$ws.log 2>&1; grep -E 'PASSED|FAILED|Failure' $L/tests_ws$ws.log | head -6
done
run() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 30 --only gpu:wgmma_implicit_gemm > $L/$tag.log 2>&1
}
for r in 1 2; do
  run plan_r$r X=1
  run ws4_r$r CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x128
  run ws5_r$r CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_TILE=128x128
  run ws464_r$r CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x64
  run ws0_r$r CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_TILE=128x128
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
tags = ["plan", "ws0", "ws4", "ws5", "ws464"]
v = {t: [parse(f"{t}_r1"), parse(f"{t}_r2")] for t in tags}
best = {t: [min(a[1], b[1]) for a, b in zip(*v[t])] for t in tags}
names = [n for n, _ in v["plan"][0]]
print(f"{'layer':28s} " + " ".join(f"{t:>8s}" for t in tags) + "  plan/best-tma")
g = {t: 0.0 for t in tags}
for i, n in enumerate(names):
    row = [best[t][i] for t in tags]
    tma = min(best["ws4"][i], best["ws5"][i], best["ws464"][i])
    print(f"{n:28s} " + " ".join(f"{x:8.4f}" for x in row) + f"  {best['plan'][i] / tma:.3f}")
    for t in tags: g[t] += math.log(best["plan"][i] / best[t][i])
for t in tags: print(f"geomean plan/{t}: {math.exp(g[t] / len(names)):.4f}")
PY
tar -C $L -czf $OUT/bwd_logs.tgz .
