#!/bin/bash
# Device run: strided 3D backward-data on the tensor cores (issue 17) and the 3D helper dedupe.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}; mkdir -p $O
PY=/opt/torch/.venv/bin/python3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/gpu.txt 2>&1
PARTS=${PARTS:-tests san bench}
has() { [[ " $PARTS " == *" $1 "* ]]; }
if has tests; then
  echo "=== gpu_tests"; (time timeout 300 db/gpu_tests) > $O/gpu_tests.log 2>&1; tail -4 $O/gpu_tests.log
  grep -E 'FAILED|Failure' $O/gpu_tests.log | head -20
fi
if has san; then
  echo "=== memcheck 3D"
  timeout 240 compute-sanitizer --tool memcheck --print-limit 5 db/gpu_tests --gtest_filter='Gpu.TensorCore3D*' > $O/memcheck3d.log 2>&1; tail -3 $O/memcheck3d.log
  echo "=== racecheck 3D shapes"
  timeout 240 compute-sanitizer --tool racecheck --print-limit 5 db/gpu_tests --gtest_filter='Gpu.TensorCore3DOnItsShapes' > $O/racecheck3d.log 2>&1; tail -3 $O/racecheck3d.log
fi
if has bench; then
  echo "=== r3d18 bwd_data bf16 vs the honest peer"
  CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
  timeout 200 db/gpu_bench --suite data/suites/r3d18.txt --dtype bf16 --layout nhwc --direction bwd_data \
    --runs 30 --json $O/peer3d_bwdd.jsonl > $O/bench3d_bwdd.log 2>&1
  "$PY" bench/gpu_peer.py $O/peer3d_bwdd.jsonl > $O/peer3d_bwdd.log 2>&1
  head -1 $O/peer3d_bwdd.log; grep -A25 '^geomean' $O/peer3d_bwdd.log
fi
