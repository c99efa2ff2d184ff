#!/bin/bash
# Session 21, call 2 (H200): cuDNN 9.19's kernels (through PyTorch 2.11) for backward-weights b32's
# 1x1 layers, each kernel's duration (ncu, clocks and caches as they run).
set -u
O=/tmp/s21b; mkdir -p $O ${OUT:-out}
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
NCU="ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,launch__cluster_dim_x,launch__cluster_dim_y,launch__cluster_dim_z,launch__shared_mem_per_block_dynamic --csv"
timeout 250 $NCU --profile-from-start off "$PY" devbin/ncu_torch_w.py > $O/torch.csv 2> $O/torch.err
echo "torch rc $?"
tar -C /tmp -cJf ${OUT:-out}/s21b.tar.xz s21b
