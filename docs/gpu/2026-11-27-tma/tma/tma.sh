#!/bin/bash
# Device run: the warp-specialised kernel with bulk-copy loaders (CONVGUARD_WGMMA_WS=4: a tile per
# block; 5: persistent): A by the im2col tensor map, B by the tiled filter map, one producer thread.
# Which end convention the im2col box's upper corner takes (CONVGUARD_TMA_UPPER_ADJ), the shape
# tests with it forced, then ResNet-50 b32 bf16 NHWC forward against the two-warpgroup kernel at the
# same 128 x 128 tiles and against the default plans.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
NHWC='--dt=bf16 --stag=axb --wtag=axb --dtag=axb'
PROBS="mb2ic64ih14oc128oh14kh3ph1 mb3ic128ih15oc64oh8kh3sh2ph1 mb2ic64ih9oc64oh9kh1 mb2ic64ih12oc128oh6kh1sh2 mb1ic64ih20oc64oh16kh5 mb2ic128ih7oc256oh7kh3ph1"
ADJ=none
for adj in 0 1 -1; do
  ok=0
  for p in $PROBS; do
    CONVGUARD_TMA_UPPER_ADJ=$adj CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x128 timeout 30 db/convguard driver --device cuda:0 \
      -S gpu:wgmma_implicit_gemm --problem "$NHWC $p" -t 1 -i 3 > $L/adj${adj}_$p.log 2>&1
    grep -q "Verifies OK" $L/adj${adj}_$p.log && ok=$((ok+1))
  done
  echo "upper adjust $adj: $ok of 6 verified"; grep -h -E "FAIL|error|Verifies" $L/adj${adj}_*.log | head -3
  if [ $ok = 6 ] && [ $ADJ = none ]; then ADJ=$adj; fi
done
[ $ADJ = none ] && { tar -C $L -czf $OUT/tma_logs.tgz .; exit 0; }
export CONVGUARD_TMA_UPPER_ADJ=$ADJ
for ws in 4 5; do
  echo "=== shape tests, WS=$ws forced"
  CONVGUARD_WGMMA_WS=$ws timeout 150 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.LargeLayersVerifyBySampling:Gpu.TensorCoreWgmmaWaveCounting' \
    > $L/tests_ws$ws.log 2>&1; grep -E 'PASSED|FAILED|Failure' $L/tests_ws$ws.log | head -6
done
run() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm > $L/$tag.log 2>&1
}
for r in 1 2; do
  run plan_r$r X=1
  run ws0_r$r CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_TILE=128x128
  run ws4_r$r CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x128
  run ws5_r$r CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_TILE=128x128
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
tar -C $L -czf $OUT/tma_logs.tgz .
