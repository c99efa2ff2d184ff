#!/bin/bash
# Session 31 call 1 (GPU, H200): does the bulk-copy (TMA) rule pay for gpu:wgmma_implicit_gemm:tf32?
# Its plain bulk-copy form was verified forced (session 27) but its rule never measured as a rule.
# ResNet-50 f32 NHWC forward, b32 and b256, the solver alone: default plans against
# CONVGUARD_WGMMA_WS=0 (never the warp-specialised kernels, so never the bulk copies), interleaved
# twice; then the TF32 shape tests with the bulk copies forced and forbidden.
set -u
L=$OUT/logs; mkdir -p $L
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp31.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
for round in 1 2; do
  for b in 32 256; do
    for ws in default 0; do
      if [ $ws = default ]; then unset CONVGUARD_WGMMA_WS; else export CONVGUARD_WGMMA_WS=$ws; fi
      timeout -k 5 120 /tmp/g/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype f32 --layout nhwc \
        --direction fwd --runs 30 --only 'gpu:wgmma_implicit_gemm:tf32' > $L/b$b.ws$ws.$round.log 2>&1
      echo "b$b ws=$ws round $round rc $?" >> $L/times.log
    done
  done
done
unset CONVGUARD_WGMMA_WS
for ws in 4 0; do
  CONVGUARD_WGMMA_WS=$ws timeout -k 5 200 /tmp/g/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.WgmmaTf32TakesThreeD:Gpu.TensorCoreWgmmaBulkCopyLoads' > $L/tests.ws$ws.log 2>&1
  echo "tests ws=$ws rc $?" >> $L/times.log
done
cat $L/times.log
for b in 32 256; do
  echo "== b$b: default r1, ws0 r1, default r2, ws0 r2 (ms)"
  paste <(grep 'gpu:wgmma_implicit_gemm:tf32 ' $L/b$b.wsdefault.1.log | awk '{print $2}') \
        <(grep 'gpu:wgmma_implicit_gemm:tf32 ' $L/b$b.ws0.1.log | awk '{print $2}') \
        <(grep 'gpu:wgmma_implicit_gemm:tf32 ' $L/b$b.wsdefault.2.log | awk '{print $2}') \
        <(grep 'gpu:wgmma_implicit_gemm:tf32 ' $L/b$b.ws0.2.log | awk '{print $2}')
done
tail -3 $L/tests.ws*.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
