#!/bin/bash
# Device run: the cluster variant (CONVGUARD_WGMMA_WS=3, the filter tile multicast to a pair of
# blocks by TMA) after its remote arrive lost .release.cluster, against the two-warpgroup kernel at
# the same 128 x 128 tiles and against the default plans; ResNet-50 b32 bf16 NHWC forward.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
echo "=== the wgmma shape tests with the cluster variant forced"
CONVGUARD_WGMMA_WS=3 timeout 120 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaStreamK*' \
  > $L/tests_ws3.log 2>&1; grep -E 'PASSED|FAILED|Failure' $L/tests_ws3.log | head
run() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm > $L/$tag.log 2>&1
}
for r in 1 2; do
  run plan_r$r X=1
  run ws0_r$r CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_TILE=128x128
  run ws3_r$r CONVGUARD_WGMMA_WS=3 CONVGUARD_WGMMA_TILE=128x128
  run ws1_r$r CONVGUARD_WGMMA_WS=1 CONVGUARD_WGMMA_TILE=128x128
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
v = {t: [parse(f"{t}_r1"), parse(f"{t}_r2")] for t in ["plan", "ws0", "ws1", "ws3"]}
best = {t: [min(a[1], b[1]) for a, b in zip(*v[t])] for t in v}
names = [n for n, _ in v["plan"][0]]
print(f"{'layer':28s} {'plan':>8s} {'ws0':>8s} {'ws1':>8s} {'ws3':>8s}  ws0/ws3 plan/ws3")
g = {"ws0/ws3": 0, "plan/ws3": 0}
for i, n in enumerate(names):
    p, a, b, c = best["plan"][i], best["ws0"][i], best["ws1"][i], best["ws3"][i]
    print(f"{n:28s} {p:8.4f} {a:8.4f} {b:8.4f} {c:8.4f}  {a/c:.3f}  {p/c:.3f}")
    g["ws0/ws3"] += math.log(a / c); g["plan/ws3"] += math.log(p / c)
for k in g: print(f"geomean {k}: {math.exp(g[k] / len(names)):.4f} over {len(names)}")
PY
echo "=== ncu: stall reasons of the cluster variant now"
CONVGUARD_WGMMA_WS=3 CONVGUARD_WGMMA_TILE=128x128 timeout 120 ncu --kernel-name regex:wgmma_forward --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --page raw db/convguard driver --device cuda:0 -S gpu:wgmma_implicit_gemm \
  --problem "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih14oc256oh14kh3ph1" -t 1 -i 6 > $L/ncu_ws3.log 2>&1
grep -E " gpu__time_duration.sum|sm__cycles_active.avg |lts__t_sectors.sum |lts__t_requests.sum " $L/ncu_ws3.log
grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio" $L/ncu_ws3.log | sort -k3 -n -r | head -5
tar -C $L -czf $OUT/cluster_logs.tgz .
