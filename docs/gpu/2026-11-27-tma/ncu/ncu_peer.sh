#!/bin/bash
# Device run: what cuDNN 9.19 (PyTorch 2.11) runs on three ResNet-50 b32 bf16 channels-last forward
# layers, under Nsight Compute: the kernel's name (tile, cluster), launch shape and memory traffic,
# beside the own two-warpgroup kernel's on the same layers.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
PY=/opt/torch/.venv/bin/python3
cat > $L/conv.py <<'PY'
import sys, torch
n, c, h, k, r, s = (int(v) for v in sys.argv[1:7])
torch.backends.cudnn.benchmark = True
x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
w = torch.randn(k, c, r, r, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
for _ in range(20):
    y = torch.nn.functional.conv2d(x, w, padding=r // 2, stride=s)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for _ in range(3):
    y = torch.nn.functional.conv2d(x, w, padding=r // 2, stride=s)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
PY
M="gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,sm__cycles_active.avg,sm__cycles_active.max,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,sm__inst_executed_pipe_tensor_op_gmma.sum"
for layer in "32 256 14 256 3 1" "32 512 28 128 1 1" "32 1024 14 256 1 1" "32 128 28 128 3 1"; do
  set -- $layer
  echo "=== layer n=$1 c=$2 h=$3 k=$4 r=$5 s=$6: cuDNN"
  timeout 120 ncu --profile-from-start off --launch-count 3 --metrics $M $PY $L/conv.py $layer > $L/peer_$1_$2_$3_$4_$5.log 2>&1
  grep -E "^  [a-zA-Z_].*\(|gpu__time|grid_size|block_size|cluster_dim|registers|shared_mem|lts__t_bytes|srcunit_tex|dram__bytes|cycles_active|lts__throughput|xbar2l1tex|gmma" $L/peer_$1_$2_$3_$4_$5.log | head -40
  echo "=== same layer: own"
  p="--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb$1ic$2ih$3oc$4oh$(( $3 / $6 ))kh$5ph$(( $5 / 2 ))"
  timeout 120 ncu --kernel-name regex:wgmma_forward --launch-skip 3 --launch-count 1 --metrics $M \
    db/convguard driver --device cuda:0 -S gpu:wgmma_implicit_gemm --problem "$p" -t 1 -i 6 > $L/own_$1_$2_$3_$4_$5.log 2>&1
  grep -E "^  [a-zA-Z_].*\(|gpu__time|grid_size|block_size|cluster_dim|registers|shared_mem|lts__t_bytes|srcunit_tex|dram__bytes|cycles_active|lts__throughput|xbar2l1tex|gmma" $L/own_$1_$2_$3_$4_$5.log | head -20
done
tar -C $L -czf $OUT/peer_ncu_logs.tgz .
