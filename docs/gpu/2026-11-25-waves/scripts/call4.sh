#!/usr/bin/env bash
# Device call 4 (branch waves): gpu_tests after the determinism tests share tests/gpu_shapes.hpp's
# two_runs (no kernel change since call 2).
set -u
D=devbin-waves
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
gunzip -kf $D/gpu_tests.gz; chmod +x $D/gpu_tests
L=$OUT/l; mkdir -p "$L"
( time timeout 150 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "Deterministic|PASSED|FAILED|real" "$L/gpu_tests.log"
