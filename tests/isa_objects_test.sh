#!/usr/bin/env bash
# The per-ISA kernel objects (the sources CMakeLists.txt compiles with wider-ISA flags through
# convguard_isa_source) must define no weak symbols: a library template instantiated there
# (std::vector, std::function, std::min) or an inline member of a class is a weak copy compiled
# for that ISA, and the linker may keep it for the whole program, which then faults on a CPU
# without the ISA. Only the exception personality's reference is allowed.
#   isa_objects_test.sh ISA_SOURCE... -- OBJECT...
# An ISA source is matched to the object whose path ends in "/<source>.o"; each must have one.
set -euo pipefail
sources=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sources+=("$1"); shift; done
[ $# -gt 0 ] || { echo "usage: isa_objects_test.sh ISA_SOURCE... -- OBJECT..."; exit 2; }
shift
[ ${#sources[@]} -gt 0 ] || { echo "FAIL: no per-ISA sources named"; exit 1; }
checked=0 bad=0
for src in "${sources[@]}"; do
  object=""
  for o in "$@"; do
    case "$o" in */"$src".o) object="$o" ;; esac
  done
  if [ -z "$object" ]; then
    echo "FAIL: no object for the per-ISA source $src"
    bad=$((bad + 1))
    continue
  fi
  checked=$((checked + 1))
  weak=$(nm -C --defined-only "$object" | awk '$2 ~ /^[WVuw]$/' | grep -v 'DW.ref.__gxx_personality_v0' || true)
  if [ -n "$weak" ]; then
    echo "FAIL: $object defines weak symbols (library templates compiled for its ISA):"
    echo "$weak" | head -10
    bad=$((bad + 1))
  fi
done
echo "$checked per-ISA objects checked, $bad failed"
[ "$bad" -eq 0 ]
