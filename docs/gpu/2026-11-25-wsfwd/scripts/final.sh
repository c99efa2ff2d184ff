#!/usr/bin/env bash
# Final call A: SASS; gpu_tests with the default plans; the wgmma tests with each warp-specialised
# mode forced (CONVGUARD_WGMMA_WS=1 plain, 2 persistent, 3 cluster); the sabotage build (consumers
# skip every other full-barrier wait) with WS=2; then the honest peer (gpu_wgmma.sh PARTS=peer)
# for main 5069a0d's binaries (base/) and this branch's, in the same call.
set -u
D=devbin-wsfwd
gunzip -kf $D/base/gpu_bench.gz $D/gpu_tests_sabotage.gz
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
{ echo "HGMMA: $(cuobjdump -sass $D/gpu_tests | grep -c HGMMA)"; echo "SYNCS (mbarrier): $(cuobjdump -sass $D/gpu_tests | grep -c SYNCS)"; echo "UTMALDG (TMA): $(cuobjdump -sass $D/gpu_tests | grep -c UTMALDG)"; echo "LDGSTS (cp.async): $(cuobjdump -sass $D/gpu_tests | grep -c LDGSTS)"; } | tee "$L/sass.txt"
( time timeout 200 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "wgmma_impl|FAIL|PASSED|real" "$L/gpu_tests.log" | head -20
F='Gpu.TensorCoreWgmma*:Gpu.LargeLayers*:Gpu.Random*'
for m in 1 2 3; do
  CONVGUARD_WGMMA_WS=$m timeout 120 $D/gpu_tests --gtest_filter="$F" 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests_ws$m.log"
  echo "WS=$m rc $?: $(grep -E 'PASSED|FAILED' "$L/gpu_tests_ws$m.log" | head -3 | tr '\n' ' ')"
done
CONVGUARD_WGMMA_WS=2 timeout 120 $D/gpu_tests_sabotage --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.LargeLayers*' > "$L/sabotage.log" 2>&1
echo "sabotage rc $?"; grep -E "FAILED|PASSED|outside" "$L/sabotage.log" | head -6
mkdir -p "$L/base"
BUILD=$D/base PARTS=peer bash $D/gpu_wgmma.sh > "$L/base/peer_part.txt" 2>&1
mv "$L"/peer* "$L"/summary.txt "$L/base/" 2>/dev/null
tail -3 "$L/base/summary.txt"
BUILD=$D PARTS=peer bash $D/gpu_wgmma.sh > "$L/peer_part.txt" 2>&1
cat "$L/summary.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" l
