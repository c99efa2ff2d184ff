#!/bin/bash
# Session 8, call 5: the cluster rule keeping the unclustered splits where clusters would run fewer
# blocks: gpu_tests, old rule and new timed interleaved (the new plan printed), the bwd_weights peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/v5; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $O/gpu.txt 2>&1
echo "=== gpu_tests"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -30
echo "=== timing, old rule (limit 1) and the new default, two rounds; $(( $(date +%s) - S )) s so far"
for r in 1 2; do for cz in 1 0; do
  ( [ $cz = 0 ] && export CONVGUARD_WGMMA_BWDW_PLAN=1; [ $cz = 0 ] || export CONVGUARD_WGMMA_BWDW_CLUSTER=$cz; timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 \
    --layout nhwc --direction bwd_weights --runs 30 --only gpu:wgmma_bwd_weights > $O/t_${cz}_r$r.log 2>&1 )
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
t = {cz: [times(f"{O}/t_{cz}_r{r}.log") for r in (1, 2)] for cz in (1, 0)}
best = {cz: {k: min(d[k] for d in t[cz] if k in d) for k in t[cz][0]} for cz in t}
lg = 0; n = 0
print("layer                        old ms   new ms   old/new")
for k, o in best[1].items():
    if k not in best[0]: continue
    n += 1; r = o / best[0][k]; lg += math.log(r)
    print(f"{k:28s} {o:.4f}  {best[0][k]:.4f}  {r:.3f}")
print(f"geomean speedup new/old: {math.exp(lg/n):.4f} ({n} layers)")
PY
echo "=== peer, bwd_weights; $(( $(date +%s) - S )) s so far"
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 150 \
  db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 30 --json $O/peer.jsonl > $O/peer_gpu_bench.log 2>&1
timeout 120 "$PY" bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
grep -A12 '^geomean' $O/peer.log
grep -h 'wgmma_bwd_weights plan' $O/t_0_r1.log | sort | uniq -c | head -30
echo "total $(( $(date +%s) - S )) s"
tar czf ${OUT:-out}/v5.tgz -C /tmp v5
