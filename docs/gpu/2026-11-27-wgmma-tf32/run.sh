#!/bin/bash
# Device run: TF32 on wgmma (gpu:wgmma_implicit_gemm:tf32, issue 17).
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}; mkdir -p $O
PY=/opt/torch/.venv/bin/python3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/gpu.txt 2>&1
PARTS=${PARTS:-tests san bench}
DIRS=${DIRS:-fwd}
has() { [[ " $PARTS " == *" $1 "* ]]; }
if has tests; then
  echo "=== gpu_tests"; (time timeout 300 db/gpu_tests) > $O/gpu_tests.log 2>&1; tail -4 $O/gpu_tests.log
  grep -E 'FAILED|Failure|TF32 relative' $O/gpu_tests.log | head -20
fi
if has san; then
  echo "=== memcheck TF32 wgmma"
  timeout 200 compute-sanitizer --tool memcheck --print-limit 5 db/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaTf32*:Gpu.TensorCore3DOnItsShapes:Gpu.Tf32*' > $O/memcheck_tf32.log 2>&1; tail -3 $O/memcheck_tf32.log
  echo "=== racecheck TF32 wgmma shapes"
  timeout 200 compute-sanitizer --tool racecheck --print-limit 5 db/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaTf32OnItsShapes' > $O/racecheck_tf32.log 2>&1; tail -3 $O/racecheck_tf32.log
fi
if has bench; then
  CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
  for d in $DIRS; do
    echo "=== ResNet-50 b32 f32 NHWC $d (TF32 rows against cuDNN's TF32 and PyTorch with allow_tf32)"
    timeout ${BENCH_LIMIT:-240} db/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc \
      --direction $d --runs 20 --json $O/peer_tf32_$d.jsonl > $O/bench_tf32_$d.log 2>&1
    "$PY" bench/gpu_peer.py $O/peer_tf32_$d.jsonl > $O/peer_tf32_$d.log 2>&1
    head -1 $O/peer_tf32_$d.log; grep -A30 '^geomean' $O/peer_tf32_$d.log
  done
fi
