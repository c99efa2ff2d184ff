#!/bin/bash
# Device run: old (9b7eb64) and new gpu_bench interleaved at batch 256 (the bulk-copy rule was
# measured at batch 32), ResNet-50 bf16 NHWC forward and backward-data, two rounds.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
for d in fwd bwd_data; do for r in 1 2; do for v in old new; do
  B=db/bench/gpu_bench; [ $v = old ] && B=db/old/bench/gpu_bench
  timeout 120 $B --suite data/suites/resnet50.txt --batch 256 --dtype bf16 --layout nhwc --direction $d --runs 10 \
    --only gpu:wgmma_implicit_gemm > $L/ab_${d}_${v}_r$r.log 2>&1
done; done; done
python3 - "$L" <<'PY' | tee $L/ab_summary.txt
import math, re, sys, glob
d = sys.argv[1]
def parse(f):
    out, name = [], None
    for line in open(f):
        if "GFLOP" in line and not line.startswith(" "): name = line.split()[0]
        m = re.match(r"\s+gpu:wgmma\S*\s+([\d.]+) ms", line)
        if m: out.append((name, float(m.group(1))))
    return out
for tag in ["fwd", "bwd_data"]:
    runs = {v: [parse(f) for f in sorted(glob.glob(f"{d}/ab_{tag}_{v}_r*.log"))] for v in ["old", "new"]}
    names = [n for n, _ in runs["old"][0]]
    g = 0.0
    for i, n in enumerate(names):
        o = min(r[i][1] for r in runs["old"]); w = min(r[i][1] for r in runs["new"])
        print(f"{tag} {n:28s} old {o:.4f} new {w:.4f}  new/old speed {o / w:.3f}")
        g += math.log(o / w)
    print(f"{tag}: geomean speedup new/old {math.exp(g / len(names)):.4f} over {len(names)}")
PY
tar -C $L -czf $OUT/b256_logs.tgz .
