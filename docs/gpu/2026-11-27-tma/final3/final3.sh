#!/bin/bash
# Device run: the rule after batch 256 (larger tiles of more than 6 waves keep their kernel): the
# bulk-copy tests, then old (9b7eb64) and new gpu_bench interleaved at batch 32 and 256, ResNet-50
# bf16 NHWC forward and backward-data, two rounds each.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
timeout 120 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaWaveCounting:Gpu.TensorCoreWgmmaBackwardDataWorkspace' \
  > $L/tests.log 2>&1; grep -E 'PASSED|FAILED|Failure' $L/tests.log | head -5
for b in 32 256; do for d in fwd bwd_data; do for r in 1 2; do for v in old new; do
  B=db/bench/gpu_bench; [ $v = old ] && B=db/old/bench/gpu_bench
  timeout 120 $B --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc --direction $d \
    --runs $([ $b = 32 ] && echo 30 || echo 10) --only gpu:wgmma_implicit_gemm > $L/ab_b${b}_${d}_${v}_r$r.log 2>&1
done; done; done; done
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
for tag in ["b32_fwd", "b32_bwd_data", "b256_fwd", "b256_bwd_data"]:
    runs = {v: [parse(f) for f in sorted(glob.glob(f"{d}/ab_{tag}_{v}_r*.log"))] for v in ["old", "new"]}
    names = [n for n, _ in runs["old"][0]]
    g = 0.0
    for i, n in enumerate(names):
        o = min(r[i][1] for r in runs["old"]); w = min(r[i][1] for r in runs["new"])
        print(f"{tag} {n:28s} old {o:.4f} new {w:.4f}  new/old speed {o / w:.3f}")
        g += math.log(o / w)
    print(f"{tag}: geomean speedup new/old {math.exp(g / len(names)):.4f} over {len(names)}")
PY
tar -C $L -czf $OUT/final3_logs.tgz .
