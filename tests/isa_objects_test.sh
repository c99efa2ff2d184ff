#!/usr/bin/env bash
# The per-ISA kernel objects (*_avx512.cpp, *_avx2.cpp, *_amx.cpp, compiled with wider-ISA
# flags) must define no weak symbols: a library template instantiated there (std::vector,
# std::function, std::min) is a weak copy compiled for that ISA, and the linker may keep it for
# the whole program, which then faults on a CPU without the ISA. Only the exception personality's
# reference is allowed.
#   isa_objects_test.sh OBJECT...
set -euo pipefail
checked=0 bad=0
for o in "$@"; do
  case "$o" in *_avx512*.o | *_avx2*.o | *_amx*.o) ;; *) continue ;; esac
  checked=$((checked + 1))
  weak=$(nm -C --defined-only "$o" | awk '$2 ~ /^[WVuw]$/' | grep -v 'DW.ref.__gxx_personality_v0' || true)
  if [ -n "$weak" ]; then
    echo "FAIL: $o defines weak symbols (library templates compiled for its ISA):"
    echo "$weak" | head -10
    bad=$((bad + 1))
  fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no per-ISA objects among the arguments"; exit 1; }
echo "$checked per-ISA objects checked, $bad with weak symbols"
[ "$bad" -eq 0 ]
