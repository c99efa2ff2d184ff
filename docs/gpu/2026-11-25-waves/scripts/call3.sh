#!/usr/bin/env bash
# Device call 3 (branch waves): racecheck to its summary line (call 2's forced run reached its
# 100 s limit at teardown): the two-per-SM kernel forced over the in-place shape test, and the
# default plans over the two-per-SM determinism test (528 blocks, two per SM by the rule).
set -u
D=devbin-waves
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
gunzip -kf $D/gpu_tests.gz; chmod +x $D/gpu_tests
L=$OUT/l; mkdir -p "$L"
timeout 100 compute-sanitizer --tool racecheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaTwoPerSm*' > "$L/racecheck.log" 2>&1
echo "racecheck default rc $?: $(tail -2 "$L/racecheck.log" | tr '\n' ' ')"
CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_PER_SM=2 timeout 400 compute-sanitizer --tool racecheck \
  --print-limit 5 $D/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace' \
  > "$L/racecheck_persm2.log" 2>&1
echo "racecheck per_sm 2 forced rc $?: $(tail -2 "$L/racecheck_persm2.log" | tr '\n' ' ')"
