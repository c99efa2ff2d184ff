#!/usr/bin/env bash
# Compile-checks convguard's portable GPU sources as HIP for AMD targets (gfx1010: RDNA1, the
# seeds' RX 5600 XT; gfx1030: RDNA2), with Debian's hipcc (ROCm 5.2.3, the version of seed 001),
# so an AMD user's build is not first tried by them. Nothing on this machine can run HIP code:
# this proves the shim (src/gpu/runtime.hpp) and the kernels compile, not that they are right.
# The tensor-core solver is CUDA-only (PTX) and is left out of HIP builds by design.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v hipcc >/dev/null; then
  echo "hip_check: FAIL: hipcc not installed (scripts/install-deps.sh test installs it)" >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in src/gpu/solvers/naive.cu src/gpu/solvers/implicit_gemm.cu \
         src/gpu/solvers/implicit_gemm_forward.cu src/gpu/solvers/simt_gemm.cu \
         src/gpu/solvers/simt_gemm_bwdw.cu \
         src/gpu/solvers/winograd.cu \
         src/gpu/solvers/direct.cu src/gpu/delay.cu src/gpu/device.cpp \
         src/gpu/trial.cpp; do
  hipcc -x hip --offload-arch=gfx1010 --offload-arch=gfx1030 -DCONVGUARD_HIP -std=c++20 -O2 \
    -Wall -Werror -Isrc -Iinclude -c "$f" -o "$out/$(basename "$f").o"
  echo "hip_check: $f compiles for gfx1010 and gfx1030"
done
