#!/bin/bash
# Session 14, call 2 (H200): where the short 1x1 backward-weights layers spend their time:
# batch sweep of the own kernel (no pairs), kernel durations at real clocks under ncu (own and
# PyTorch's cuDNN kernels on the same layers).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
export CONVGUARD_WGMMA_BWDW_PAIR=0
grep -E 'res3\[b-d\]_branch2a|res4\[a-f\]_branch2c|res5\[a-c\]_branch2c|res3\[b-d\]_branch2b' data/suites/resnet50.txt > $O/mini.txt
for b in 8 16 32 64 128; do
  timeout 60 db/bench/gpu_bench --suite $O/mini.txt --batch $b --dtype bf16 --layout nhwc --direction bwd_weights --runs 30 --only gpu:wgmma_bwd_weights > $O/sweep_b$b.log 2>&1
  echo "b$b: $(grep -E '^\s+gpu:wgmma_bwd_weights' $O/sweep_b$b.log | awk '{print $2}' | tr '\n' ' ')"
done
echo "=== ncu own $(t)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
M=gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_z,launch__shared_mem_per_block_dynamic,launch__registers_per_thread,launch__block_size,dram__bytes_read.sum,lts__t_bytes.sum
timeout 150 $NCU --clock-control none --metrics $M --csv db/bench/gpu_bench --suite $O/mini.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 --only gpu:wgmma_bwd_weights > $O/ncu_own.csv 2> $O/ncu_own.err
echo "rc $?"; python3 - $O/ncu_own.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; iK = hdr.index('Kernel Name'); iM = hdr.index('Metric Name'); iV = hdr.index('Metric Value'); iI = hdr.index('ID')
cur = {}
for r in rows[1:]:
    cur.setdefault(r[iI], {'k': r[iK][:60]})[r[iM]] = r[iV]
for i, d in cur.items():
    print(i, d['k'], ' '.join(f"{m.split('__')[1]}={v}" for m, v in d.items() if m != 'k'))
PY
echo "=== ncu torch $(t)"
PY=/opt/torch/.venv/bin/python3; [ -x $PY ] || PY=python3
timeout 200 $NCU --clock-control none --metrics $M --csv --nvtx --nvtx-include 'layer*/' $PY devbin/torch_bwdw.py 32 > $O/ncu_torch.csv 2> $O/ncu_torch.err
echo "rc $?"; tail -3 $O/ncu_torch.err; python3 - $O/ncu_torch.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: sys.exit()
hdr = rows[0]; iK = hdr.index('Kernel Name'); iM = hdr.index('Metric Name'); iV = hdr.index('Metric Value'); iI = hdr.index('ID')
cur = {}
for r in rows[1:]:
    cur.setdefault(r[iI], {'k': r[iK][:90]})[r[iM]] = r[iV]
for i, d in cur.items():
    print(i, d['k'], ' '.join(f"{m.split('__')[1]}={v}" for m, v in d.items() if m != 'k'))
PY
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s14b.tgz s14b
