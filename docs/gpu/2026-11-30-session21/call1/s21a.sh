#!/bin/bash
# Session 21, call 1 (H200): where the time of backward-weights b32's 1x1 layers goes: each kernel's
# duration (ncu, clocks and caches as they run) for gpu:wgmma_bwd_weights (main kernel + split
# reduction) and for PyTorch's cuDNN 9.19 on the same layers.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s21a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
NCU="ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 200 $NCU db/bench/gpu_bench --suite devbin/l9.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 3 --calls 1 --only 'gpu:wgmma_bwd_weights' > $O/own.csv 2> $O/own.err
echo "own rc $? $(t)"
timeout 250 $NCU --profile-from-start off "$PY" devbin/ncu_torch_w.py > $O/torch.csv 2> $O/torch.err
echo "torch rc $? $(t)"
tar -C /tmp -cJf ${OUT:-out}/s21a.tar.xz s21a
