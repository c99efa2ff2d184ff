#!/bin/bash
# Device run: where stream-K's time goes (Nsight Compute on the plain and stream-K kernels).
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
L=$(mktemp -d)
NHWC='--dt=bf16 --stag=axb --wtag=axb --dtag=axb'
for p in "mb32ic256ih14oc256oh14kh3ph1" "--dir=BWD_D mb32ic256ih14oc1024oh14kh1" "mb32ic128ih28oc128oh28kh3ph1"; do
  tag=$(echo "$p" | tr -c 'a-z0-9\n' '_')
  for sk in 0 1; do
    echo "=== $p SK=$sk"
    CONVGUARD_WGMMA_SK=$sk timeout 60 db/convguard driver --device cuda:0 -S gpu:wgmma_implicit_gemm \
      --problem "$NHWC $p" -t 1 -i 50 2>&1 | tail -2
    CONVGUARD_WGMMA_SK=$sk timeout 120 ncu --kernel-name regex:wgmma_forward --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section WarpStateStats \
      --metrics sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.avg,lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
      db/convguard driver --device cuda:0 -S gpu:wgmma_implicit_gemm --problem "$NHWC $p" -t 1 -i 6 \
      > $L/ncu_${tag}_sk$sk.log 2>&1
    grep -E "Duration|L2 Cache Throughput|DRAM Throughput|Memory Throughput|Compute \(SM\)|sm__cycles_active|sm__cycles_elapsed|lts__t_bytes|lts__t_sectors|gmma|Registers|Grid Size|Max Bandwidth|L1/TEX Hit|L2 Hit|Stall|Warp Cycles Per Issued" $L/ncu_${tag}_sk$sk.log | head -30
  done
done
tar -C $L -czf $OUT/ncu_logs.tgz .
