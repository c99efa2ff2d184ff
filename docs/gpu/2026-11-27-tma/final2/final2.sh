#!/bin/bash
# Device run: the bulk-copy loaders as the plan picks them (tma_ws_for), forward and stride-1
# backward-data. Tests (all, then the forward and backward-data shape tests with each bulk-copy
# form forced, memcheck), old (9b7eb64) and new gpu_bench interleaved on ResNet-50 b32 bf16 NHWC
# forward and backward-data, then the peer in both.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
PY=/opt/torch/.venv/bin/python3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
echo "=== gpu_tests"; (time timeout 250 db/tests/gpu_tests) > $L/gpu_tests.log 2>&1; tail -4 $L/gpu_tests.log
grep -E 'FAILED|Failure' $L/gpu_tests.log | head -10
for ws in 4 5; do
  echo "=== forward shape tests, WS=$ws forced"
  CONVGUARD_WGMMA_WS=$ws timeout 200 db/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaWaveCounting:Gpu.LargeLayersVerifyBySampling' \
    > $L/tests_ws$ws.log 2>&1; grep -E 'PASSED|FAILED|Failure' $L/tests_ws$ws.log | head -6
done
echo "=== memcheck: the bulk-copy tests and the wgmma shape tests"
timeout 200 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBackwardDataFilterInPlace' > $L/memcheck.log 2>&1; tail -2 $L/memcheck.log
ab() {  # dir tag rounds
  for r in $(seq 1 $3); do for v in old new; do
    B=db/bench/gpu_bench; [ $v = old ] && B=db/old/bench/gpu_bench
    timeout 100 $B --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --direction $1 --runs 30 \
      --only gpu:wgmma_implicit_gemm > $L/ab_${2}_${v}_r$r.log 2>&1
  done; done
}
ab fwd fwd 3
ab bwd_data bwdd 3
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
for tag in ["fwd", "bwdd"]:
    runs = {v: [parse(f) for f in sorted(glob.glob(f"{d}/ab_{tag}_{v}_r*.log"))] for v in ["old", "new"]}
    names = [n for n, _ in runs["old"][0]]
    g = 0.0
    for i, n in enumerate(names):
        o = min(r[i][1] for r in runs["old"]); w = min(r[i][1] for r in runs["new"])
        print(f"{tag} {n:28s} old {o:.4f} new {w:.4f}  new/old speed {o / w:.3f}")
        g += math.log(o / w)
    print(f"{tag}: geomean speedup new/old {math.exp(g / len(names)):.4f} over {len(names)}")
PY
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
for d in fwd bwd_data; do
  echo "=== peer: ResNet-50 b32 bf16 NHWC $d"
  timeout 200 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction $d --runs 30 --json $L/peer_$d.jsonl > $L/bench_$d.log 2>&1
  "$PY" bench/gpu_peer.py $L/peer_$d.jsonl > $L/peer_$d.log 2>&1
  grep -A8 '^geomean' $L/peer_$d.log | grep wgmma
done
tar -C $L -czf $OUT/final2_logs.tgz .
