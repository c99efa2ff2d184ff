#!/bin/bash
# Session 8, call 3: gpu:wgmma_bwd_weights' split reductions as clusters: tests (each cluster size
# forced), sanitizers, each cluster limit timed on ResNet-50 b32 (interleaved, two rounds), peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}/v3; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $O/gpu.txt 2>&1
echo "=== gpu_tests"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -30
F='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
for cz in 1 2 3 4 5 8; do
  CONVGUARD_WGMMA_BWDW_CLUSTER=$cz timeout 100 db/tests/gpu_tests --gtest_filter="$F" > $O/cz$cz.log 2>&1
  echo "cluster $cz: $(grep -E 'PASSED|FAILED' $O/cz$cz.log | tr '\n' ' ')"; grep -A4 Failure $O/cz$cz.log | head -8
done
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --print-limit 5 db/tests/gpu_tests --gtest_filter="$F" > $O/$tool.log 2>&1
  echo "$tool rc $?: $(grep -E 'SUMMARY|PASSED|FAILED' $O/$tool.log | tr '\n' ' ')"
done
echo "=== timing, cluster limit 1 (old rule) 2 4 8 (auto), two rounds; $(( $(date +%s) - S )) s so far"
for r in 1 2; do for cz in 1 2 4 8; do
  CONVGUARD_WGMMA_BWDW_CLUSTER=$cz timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 \
    --layout nhwc --direction bwd_weights --runs 30 --only gpu:wgmma_bwd_weights > $O/t_${cz}_r$r.log 2>&1
done; done
python3 - $O <<'PY' | tee $O/timing.txt
import sys, math, re
O = sys.argv[1]
def times(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r'^((conv|res)\S+)', line)
        if m: name = m.group(1)
        m = re.match(r'^\s+gpu:wgmma_bwd_weights\s+([0-9.]+) ms', line)
        if m and name: out[name] = float(m.group(1))
    return out
t = {cz: [times(f"{O}/t_{cz}_r{r}.log") for r in (1, 2)] for cz in (1, 2, 4, 8)}
best = {cz: {k: min(d[k] for d in t[cz] if k in d) for k in t[cz][0]} for cz in t}
logs = {2: 0, 4: 0, 8: 0}; n = 0
print("layer                         limit1(old)  limit2   limit4   limit8   old/2  old/4  old/8")
for k, o in best[1].items():
    if not all(k in best[c] for c in (2, 4, 8)): continue
    n += 1
    r = {c: o / best[c][k] for c in (2, 4, 8)}
    for c in r: logs[c] += math.log(r[c])
    print(f"{k:28s} {o:.4f}  {best[2][k]:.4f}  {best[4][k]:.4f}  {best[8][k]:.4f}  {r[2]:.3f}  {r[4]:.3f}  {r[8]:.3f}")
print("geomean speedup over the old rule:", " ".join(f"limit{c} {math.exp(logs[c]/n):.4f}" for c in logs), f"({n} layers)")
PY
echo "=== peer, bwd_weights; $(( $(date +%s) - S )) s so far"
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 150 \
  db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 30 --json $O/peer.jsonl > $O/peer_gpu_bench.log 2>&1
timeout 120 "$PY" bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
grep -A12 '^geomean' $O/peer.log
echo "total $(( $(date +%s) - S )) s"
tar czf ${OUT:-out}/v3.tgz -C ${OUT:-out} v3
