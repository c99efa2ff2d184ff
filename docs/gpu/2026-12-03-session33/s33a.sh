#!/bin/bash
# Session 33 call 1 (H200): gpu_tests on main after the geometry merge; PyTorch's cuDNN kernels
# (names, times) on every ResNet-50 b32 bf16 layer in three directions (gpu_peer.py --kernels);
# the wgmma plan space on the GEMM of M 1568, N 512, K 2048 (backward-data res5[a-c]_branch2c,
# forward res5[b-c]_branch2a); Nsight Compute's per-kernel times of the default plan.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$($PY -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
timeout -k 5 200 /tmp/g/gpu_tests > $L/tests.log 2>&1; t "gpu_tests rc $?"
B='--dtype bf16 --layout nhwc --batch 32'
for d in fwd bwd_data bwd_weights; do
  timeout -k 5 60 /tmp/g/gpu_bench --suite data/suites/resnet50.txt $B --direction $d --runs 20 \
    --only 'gpu:wgmma_*' --json $L/own_$d.jsonl > $L/own_$d.log 2>&1; t "own $d rc $?"
done
cat $L/own_*.jsonl > $L/own.jsonl
timeout -k 5 120 $PY bench/gpu_peer.py --kernels $L/own.jsonl > $L/peer_kernels.log 2>&1; t "peer rc $?"
scan() {  # NAME SUITE DIR ENV...
  local n=$1 s=$2 d=$3; shift 3
  echo "== $n: $*" >> $L/scan_$d.log
  env "$@" CONVGUARD_WGMMA_PLAN=1 timeout -k 5 30 /tmp/g/gpu_bench --suite $s $B --direction $d --runs 40 \
    --only gpu:wgmma_implicit_gemm 2>&1 | grep -E "plan|gpu:wgmma_implicit_gemm " | head -4 >> $L/scan_$d.log
}
for round in 1 2; do
  for pr in "docs/gpu/2026-12-03-session33/r5c.txt bwd_data" "docs/gpu/2026-12-03-session33/r5b.txt fwd"; do
    set -- $pr
    scan default $1 $2 X=1
    for sp in 1 2 4; do scan t128x64s$sp $1 $2 CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=$sp; done
    for sp in 1 2 3 4; do scan t128x128s$sp $1 $2 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=$sp; done
    for sp in 2 4; do scan t128x256s$sp $1 $2 CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_SPLIT=$sp; done
    for ws in 0 4; do scan ws${ws}s2 $1 $2 CONVGUARD_WGMMA_WS=$ws CONVGUARD_WGMMA_SPLIT=2; done
    for px in 64 96 128; do scan px$px $1 $2 CONVGUARD_WGMMA_PIXELS=$px; done
  done
done
t "scan"
# calls 8: back to back, as the peer's graph replay
for pr in "docs/gpu/2026-12-03-session33/r5c.txt bwd_data" "docs/gpu/2026-12-03-session33/r5b.txt fwd"; do
  set -- $pr
  timeout -k 5 30 /tmp/g/gpu_bench --suite $1 $B --direction $2 --runs 40 --calls 8 --only gpu:wgmma_implicit_gemm > $L/calls8_$2.log 2>&1
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" >> $L/times.log
timeout -k 5 90 $NCU --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
  --print-summary per-kernel /tmp/g/gpu_bench --suite docs/gpu/2026-12-03-session33/r5c.txt $B --direction bwd_data --runs 5 --only gpu:wgmma_implicit_gemm > $L/ncu_r5c.log 2>&1; t "ncu rc $?"
cat $L/times.log; tail -3 $L/tests.log; grep -c . $L/peer_kernels.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
