#!/bin/bash
# Session 10, call 1 (H200) at b7fe1dd: gpu_tests; memcheck and racecheck with the 128 x 256 bulk-copy
# forms forced (the review fix b42140e keeps a forced tile); Nsight Compute stall reasons for the
# own kernel and PyTorch's cuDNN on four ResNet-50 b32 bf16 forward layers that lose most.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10a; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt 2>&1
PY=/opt/torch/.venv/bin/python3; [ -x $PY ] || PY=python3
echo "=== gpu_tests"; (time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -20
echo "=== memcheck 128x256 forced ws4/ws5; $(( $(date +%s) - S )) s"
for ws in 4 5; do
  CONVGUARD_WGMMA_WS=$ws CONVGUARD_WGMMA_TILE=128x256 timeout 100 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBackwardDataOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*' > $O/memcheck_ws$ws.log 2>&1
  echo "ws$ws rc $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $O/memcheck_ws$ws.log | tr '\n' ' ')"
done
echo "=== racecheck 128x256 forced; $(( $(date +%s) - S )) s"
for ws in 5 4; do
  CONVGUARD_WGMMA_WS=$ws CONVGUARD_WGMMA_TILE=128x256 timeout 110 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaBulkCopy*' > $O/racecheck_ws$ws.log 2>&1
  echo "ws$ws rc $?: $(grep -E 'OK \]|RACECHECK SUMMARY|hazard' $O/racecheck_ws$ws.log | head -8 | tr '\n' ' ')"
done
echo "=== ncu; $(( $(date +%s) - S )) s"
cat > $O/conv.py <<'PY'
import sys, torch
n, c, h, k, r, s = (int(v) for v in sys.argv[1:7])
torch.backends.cudnn.benchmark = True
x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
w = torch.randn(k, c, r, r, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
for _ in range(20):
    y = torch.nn.functional.conv2d(x, w, padding=r // 2, stride=s)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
y = torch.nn.functional.conv2d(x, w, padding=r // 2, stride=s)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
PY
ST='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
for layer in "32 128 28 128 3 1" "32 1024 14 256 1 1" "32 512 28 128 1 1" "32 256 14 1024 1 1"; do
  set -- $layer; t=$1_$2_$3_$4_$5
  p="--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb$1ic$2ih$3oc$4oh$(( $3 / $6 ))kh$5ph$(( $5 / 2 ))"
  CONVGUARD_WGMMA_PLAN=1 timeout 100 ncu --kernel-name regex:wgmma_forward --launch-skip 3 --launch-count 1 --set full --metrics $ST --print-details all \
    db/convguard driver --device cuda:0 -S gpu:wgmma_implicit_gemm --problem "$p" -t 1 -i 6 > $O/ncu_own_$t.log 2>&1
  timeout 100 ncu --profile-from-start off --launch-count 1 --set full --metrics $ST --print-details all $PY $O/conv.py $layer > $O/ncu_peer_$t.log 2>&1
  echo "$t: own $(grep -m1 -E 'Duration' $O/ncu_own_$t.log) | peer $(grep -m1 -E 'Duration' $O/ncu_peer_$t.log)"
done
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s10a.tgz s10a
