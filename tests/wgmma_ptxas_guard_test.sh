#!/usr/bin/env bash
# scripts/wgmma_ptxas_guard.sh fails a compile whose ptxas serialized or waited inside a wgmma
# pipeline and passes one that kept it: tests/data/wgmma_wait_order.cu compiled for sm_90a both
# ways (nvcc only; no GPU needed). Usage: wgmma_ptxas_guard_test.sh NVCC SOURCE_DIR
set -euo pipefail
nvcc=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile() {
  "$src/scripts/wgmma_ptxas_guard.sh" "$nvcc" -std=c++20 -I"$src/src" -I"$src/include" \
    -gencode=arch=compute_90a,code=sm_90a -c "$src/tests/data/wgmma_wait_order.cu" -o "$tmp/k.o" "$@"
}
compile > "$tmp/good.log" 2>&1 || { cat "$tmp/good.log"; echo "FAIL: the kept pipeline was refused"; exit 1; }
[[ -s "$tmp/k.o" ]] || { echo "FAIL: no object from the kept pipeline"; exit 1; }
rm -f "$tmp/k.o"
if compile -DWGMMA_READ_EARLY > "$tmp/bad.log" 2>&1; then
  cat "$tmp/bad.log"; echo "FAIL: an accumulator read before the wait compiled through the guard"; exit 1
fi
grep -q "wgmma_ptxas_guard: ptxas serialized" "$tmp/bad.log" || { cat "$tmp/bad.log"; echo "FAIL: no reason given"; exit 1; }
[[ ! -e "$tmp/k.o" ]] || { echo "FAIL: the refused object was left behind"; exit 1; }
echo "ok: the kept pipeline compiles, the serialized one is refused with its ptxas note"
