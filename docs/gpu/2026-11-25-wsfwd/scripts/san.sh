#!/usr/bin/env bash
# Final call B: compute-sanitizer memcheck and racecheck over the wgmma forward shapes with the
# persistent (WS=2, the default plan's warp-specialised kernel) and cluster (WS=3) variants forced.
set -u
D=devbin-wsfwd
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
L=$OUT/l; mkdir -p "$L"
for m in 2 3; do
  for tool in memcheck racecheck; do
    CONVGUARD_WGMMA_WS=$m timeout 140 compute-sanitizer --tool $tool --print-limit 5 $D/gpu_tests \
      --gtest_filter='Gpu.TensorCoreWgmmaOnItsShapes' > "$L/${tool}_ws$m.log" 2>&1
    echo "WS=$m $tool rc $?: $(tail -3 "$L/${tool}_ws$m.log" | tr '\n' ' ')"
  done
done
tar czf "$OUT/logs.tgz" -C "$OUT" l
