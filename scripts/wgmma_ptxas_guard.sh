#!/usr/bin/env bash
# Compiler launcher for the Hopper (sm_90a) kernels (CMakeLists.txt: convguard_gpu_sm90a's
# CUDA_COMPILER_LAUNCHER): runs the compile given as arguments and fails it when ptxas reports that
# it serialized the wgmma pipeline or waited inside it (its "info" notes C7509-C7520, e.g. C7514
# "wgmma.mma_async instructions are serialized", C7517 "warpgroup.wait is injected"). Those are
# notes, not warnings, so -Werror does not see them, and such a kernel still computes the right
# numbers at up to half the speed: session 24's microbenchmark lost 2x that way without a word
# (docs/gpu/2026-12-01-session24/README.md). The compile's own output is passed through.
set -uo pipefail
out=$("$@" 2>&1)
rc=$?
[[ -n "$out" ]] && printf '%s\n' "$out" >&2
((rc != 0)) && exit "$rc"
if grep -qiE 'ptxas info.*(wgmma|gmma|warpgroup)' <<<"$out"; then
  echo "wgmma_ptxas_guard: ptxas serialized or waited inside a wgmma pipeline (above): the kernel" \
    "would run far below its speed; keep accumulator reads after wg::wait (docs/gpu.md)" >&2
  # The object was written: remove it so the build does not take it as up to date.
  for ((i = 1; i <= $#; ++i)); do
    if [[ "${!i}" == "-o" ]]; then j=$((i + 1)); rm -f -- "${!j}"; fi
  done
  exit 1
fi
exit 0
