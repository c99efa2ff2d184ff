#!/usr/bin/env bash
# Device call 2 (branch waves): the rules (128 x 256 by wave count on forward, two blocks per SM
# for many short backward-data blocks). GPU tests (default plans; then the two-per-SM kernel
# forced on every wgmma shape), a sabotaged build, compute-sanitizer memcheck and racecheck; base
# (main 2273dc5) and new gpu_bench interleaved, three rounds, forward and backward-data; the peer
# (scripts/gpu_wgmma.sh PARTS=peer) for both directions with the new binaries.
set -u
D=devbin-waves
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
for f in $D/*.gz $D/base/*.gz; do [[ -e $f ]] && gunzip -kf "$f"; done
chmod +x $D/gpu_* $D/base/gpu_* 2>/dev/null
L=$OUT/l; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
cuobjdump --dump-resource-usage $D/gpu_tests 2>&1 | grep -A1 "Function.*wgmma_forward" > "$L/resource_raw.txt"
( time timeout 150 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
echo "tests:"; grep -E "PASSED|FAILED|real|WaveCounting|TwoPerSm" "$L/gpu_tests.log"
( time CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_PER_SM=2 timeout 150 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.LargeLayers*' ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests_persm2.log"
echo "forced 128x128 per_sm 2:"; grep -E "PASSED|FAILED|real" "$L/gpu_tests_persm2.log"
timeout 100 $D/gpu_tests_sab --gtest_filter='Gpu.TensorCoreWgmmaWaveCounting:Gpu.TensorCoreWgmmaTwoPerSm*:Gpu.LargeLayers*' > "$L/sabotage.log" 2>&1
echo "sabotage rc $?: $(grep -cE 'Failure' "$L/sabotage.log") failures; $(grep -E 'PASSED|FAILED  \]' "$L/sabotage.log" | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmma*' > "$L/memcheck.log" 2>&1
echo "memcheck rc $?: $(tail -2 "$L/memcheck.log" | tr '\n' ' ')"
CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_PER_SM=2 timeout 90 compute-sanitizer --tool memcheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace:Gpu.TensorCoreWgmmaTwoPerSm*' > "$L/memcheck_persm2.log" 2>&1
echo "memcheck per_sm 2 forced rc $?: $(tail -2 "$L/memcheck_persm2.log" | tr '\n' ' ')"
CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_PER_SM=2 timeout 100 compute-sanitizer --tool racecheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace:Gpu.TensorCoreWgmmaTwoPerSm*' > "$L/racecheck_persm2.log" 2>&1
echo "racecheck per_sm 2 forced rc $?: $(tail -2 "$L/racecheck_persm2.log" | tr '\n' ' ')"
G="--suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --runs 30 --only gpu:wgmma_implicit_gemm"
for dir in fwd bwd_data; do
  for round in 1 2 3; do
    for v in base new; do
      b=$D; [[ $v == base ]] && b=$D/base
      timeout 60 $b/gpu_bench $G --direction $dir --json "$L/${dir%%_*}_${v}${round}.jsonl" > /dev/null 2>&1
      echo "$dir $round $v rc $?"
    done
  done
  python3 $D/summ.py "$L"/${dir%%_*}_base1.jsonl "$L"/${dir%%_*}_*[123].jsonl > "$L/rounds_$dir.txt"
done
for dir in fwd bwd_data; do
  mkdir -p "$L/peer_$dir"
  OUT=$L/peer_$dir BUILD=$D PARTS=peer DIRECTION=$dir bash scripts/gpu_wgmma.sh > "$L/peer_$dir/part.txt" 2>&1
  echo "peer $dir:"; tail -3 "$L/peer_$dir/l/summary.txt"
done
head -30 "$L/rounds_fwd.txt"; head -30 "$L/rounds_bwd_data.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" l
