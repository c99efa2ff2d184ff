#!/bin/bash
# Session 21, call 3 (H200): for the next kernels' design. (1) cuDNN 9.19's kernels (PyTorch 2.11)
# for forward b256 res2a_branch2b (64 -> 64 3x3 @56), durations and launch shapes; (2) full ncu
# profiles of one gpu:wgmma_bwd_weights launch and of cuBLAS's kernel on backward-weights b32
# res3[a-d]_branch2c (128 -> 512 1x1 @28).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s21c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
M="gpu__time_duration.sum,launch__cluster_dim_x,launch__cluster_dim_y,launch__cluster_dim_z,launch__shared_mem_per_block_dynamic,launch__registers_per_thread"
timeout 120 ncu --clock-control none --cache-control none --metrics $M --csv --profile-from-start off "$PY" devbin/ncu_torch_f.py fwd > $O/torch_fwd.csv 2> $O/torch_fwd.err
echo "torch fwd rc $? $(t)"
CONVGUARD_WGMMA_PLAN=1 timeout 120 ncu --clock-control none --cache-control none --metrics $M --csv db/bench/gpu_bench --suite devbin/l2.txt --batch 256 --dtype bf16 --layout nhwc \
  --direction fwd --runs 2 --calls 1 --only 'gpu:wgmma_implicit_gemm' > $O/own_fwd.csv 2> $O/own_fwd.err
echo "own fwd rc $? $(t)"
timeout 150 ncu --set full -k regex:wgmma_bwd_weights --launch-skip 2 --launch-count 1 db/bench/gpu_bench --suite devbin/l10.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_weights --runs 3 --calls 1 --only 'gpu:wgmma_bwd_weights' > $O/own_bwdw_full.txt 2>&1
echo "own bwdw full rc $? $(t)"
timeout 150 ncu --set full -k regex:nvjet --launch-count 1 --profile-from-start off "$PY" devbin/ncu_torch_f.py bwdw > $O/torch_bwdw_full.txt 2>&1
echo "torch bwdw full rc $? $(t)"
tar -C /tmp -cJf ${OUT:-out}/s21c.tar.xz s21c
