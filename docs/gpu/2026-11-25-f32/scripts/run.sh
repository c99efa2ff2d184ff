#!/usr/bin/env bash
# gpu:simt_gemm on the H100 in one device call. PARTS: tests (its own tests, then all), san
# (memcheck, racecheck over its tests), peer (ResNet-50 b32 f32 NCHW forward: gpu_bench with the
# cuDNN plugin on PyTorch's cuDNN, bench/gpu_peer.py, scripts/peer_summary.py), ncu (Nsight
# Compute on NCU_LAYERS), var (CONVGUARD_SIMT_SPLIT variants, own solvers only).
set -u
D=${D:-devbin-f32}
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
PARTS=${PARTS:-tests peer}
has() { [[ " $PARTS " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
if has sass; then
  cuobjdump -sass $D/gpu_tests > /tmp/sass.txt 2>&1
  awk '/Function :/{f = ($0 ~ /simt_gemm/) ? $3 : ""} f != "" && /FFMA|LDL|STL|LDS|LDG|BAR/{split($0, w, " "); for (i = 1; i <= NF; i++) if ($i ~ /^(FFMA|LDL|STL|LDS|LDG|BAR)/) {sub(/\..*/, "", $i); c[f " " $i]++; break}} END{for (k in c) print k, c[k]}' /tmp/sass.txt | sort | tee "$L/sass.txt"
fi
if has tests; then
  echo "=== simt tests"
  ( time timeout 120 $D/gpu_tests --gtest_filter='Gpu.SimtGemm*' ) > "$L/simt_tests.log" 2>&1
  grep -E "verified|OK \]|FAILED|PASSED|real" "$L/simt_tests.log"
  grep -A4 "Failure" "$L/simt_tests.log" | head -30
fi
if has peer; then
  echo "=== peer"
  PY=/opt/torch/.venv/bin/python3
  CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  for dir in ${DIRS:-fwd}; do
    ( time CONVGUARD_PLUGINS=$PWD/$D/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 240 \
      $D/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nchw \
      --direction $dir --runs 30 --json "$L/peer_$dir.jsonl" ) > "$L/peer_gpu_bench_$dir.log" 2>&1
    echo "gpu_bench $dir rc $?"; tail -3 "$L/peer_gpu_bench_$dir.log"
    timeout 200 "$PY" bench/gpu_peer.py "$L/peer_$dir.jsonl" > "$L/peer_$dir.log" 2>&1
    echo "gpu_peer rc $?"
    "$PY" scripts/peer_summary.py "$L/peer_$dir.log" gpu:simt_gemm gpu:implicit_gemm | tee "$L/summary_$dir.txt"
  done
fi
if has sab; then
  echo "=== sabotage (split reduction drops the last split)"
  timeout 100 $D/gpu_tests_sab --gtest_filter='Gpu.SimtGemm*' > "$L/sabotage.log" 2>&1
  echo "rc $?"; grep -E "FAILED|PASSED|OK \]|outside" "$L/sabotage.log" | head -12
fi
if has var; then
  for s in ${SPLITS:-1 2 4}; do
    CONVGUARD_SIMT_SPLIT=$s timeout 100 $D/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 \
      --layout nchw --direction fwd --runs 30 --only gpu:simt_gemm --json "$L/var_s$s.jsonl" > "$L/var_s$s.log" 2>&1
    echo "split $s rc $?"
  done
fi
if has ncu; then
  for l in ${NCU_LAYERS:-}; do
    echo "$l" > /tmp/one.txt
    timeout 120 ncu --kernel-name regex:simt_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight \
      --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      $D/gpu_bench --suite /tmp/one.txt --batch 32 --dtype f32 --layout nchw --direction fwd --runs 3 \
      --only gpu:simt_gemm > "$L/ncu_${l%%_n*}.txt" 2>&1
    echo "ncu $l rc $?"; grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issued Ipc|No Eligible|Bank Conflicts" "$L/ncu_${l%%_n*}.txt" | head -12
  done
fi
if has full; then
  echo "=== all gpu_tests"
  ( time timeout ${FULL_T:-300} $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
  grep -E "simt|FAILED|PASSED|real|Failure" "$L/gpu_tests.log" | head -30
fi
if has san; then
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    echo "=== $tool"
    ( time timeout 150 compute-sanitizer --tool $tool --print-limit 5 $D/gpu_tests \
      --gtest_filter="$( [[ $tool == memcheck ]] && echo "${SAN_M:-Gpu.SimtGemm*}" || echo "${SAN_F:-Gpu.SimtGemmOnItsShapes}")" ) > "$L/$tool.log" 2>&1
    echo "rc $?"; grep -E "SUMMARY|PASSED|FAILED|real" "$L/$tool.log"
  done
fi
tar czf "$OUT/logs.tgz" -C "$OUT" l
