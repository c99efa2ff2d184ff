#!/usr/bin/env bash
# Builds libconvguard_torch.so on the GPU machine against the PyTorch of $PY (CUDA kernels
# registered), from what scripts/torch_gpu_pack.sh packed into devtorch/, and lays out the
# package in devtorch/python (PYTHONPATH=devtorch/python). The same sources as the CMake build
# (python/csrc), with CONVGUARD_TORCH_CUDA defined.
set -euo pipefail
PY=${PY:-python3}
D=${DEVTORCH:-devtorch}
CUDA=${CUDA_HOME:-/usr/local/cuda}
# TORCH_CUDA=0: a dry run against a CPU-only PyTorch (no CUDA kernels registered).
TORCH_CUDA=${TORCH_CUDA:-1}
cuda_def=(-DCONVGUARD_TORCH_CUDA=1)
cuda_libs=(-ltorch_cuda -lc10_cuda)
if [ "$TORCH_CUDA" = 0 ]; then cuda_def=(); cuda_libs=(); fi
PKG=$D/python/convguard
mkdir -p "$PKG/torch" "$PKG/bin" "$D/obj"
cp python/convguard/*.py "$PKG/"
cp python/convguard/torch/*.py "$PKG/torch/"
cp "$D/bin/convguard" "$PKG/bin/convguard"
read -r ABI TORCH_LIB TORCH_INC < <("$PY" - <<'PYEOF'
import torch
from torch.utils import cpp_extension as ce
import os
cuda = os.environ.get("TORCH_CUDA", "1") == "1"
try:
    inc = ce.include_paths(device_type="cuda" if cuda else "cpu")
except TypeError:
    inc = ce.include_paths(cuda=cuda)
print(int(torch._C._GLIBCXX_USE_CXX11_ABI), ce.library_paths()[0], ":".join(inc))
PYEOF
)
[ "$ABI" = 1 ] || { echo "torch_gpu_build: this PyTorch uses the old C++ ABI; convguard's libraries need _GLIBCXX_USE_CXX11_ABI=1" >&2; exit 1; }
incs=()
IFS=: read -ra dirs <<<"$TORCH_INC"
for d in "${dirs[@]}"; do incs+=(-isystem "$d"); done
objs=()
for f in python/csrc/*.cpp; do
  o=$D/obj/$(basename "$f" .cpp).o
  objs+=("$o")
  g++ -std=c++20 -O2 -fPIC -fvisibility=hidden "${cuda_def[@]}" -DFMT_SHARED \
    -D_GLIBCXX_USE_CXX11_ABI=1 -Iinclude -Isrc -isystem "$D/include" "${incs[@]}" \
    -isystem "$CUDA/include" -c "$f" -o "$o" &
done
wait
for o in "${objs[@]}"; do [ -s "$o" ] || { echo "torch_gpu_build: $o was not built" >&2; exit 1; }; done
g++ -shared -o "$PKG/libconvguard_torch.so" "${objs[@]}" \
  -Wl,--start-group "$D"/lib/*.a -Wl,--end-group \
  -L"$TORCH_LIB" -ltorch -ltorch_cpu -lc10 "${cuda_libs[@]}" -Wl,-rpath,"$TORCH_LIB" \
  -L"$CUDA/lib64" -lcudart_static -lrt -ldl -lpthread -fopenmp \
  "$D/lib/libfmt.so.9" -Wl,-rpath,"$PWD/$D/lib" -l:libsqlite3.so.0
echo "torch_gpu_build: $PKG/libconvguard_torch.so built against torch $("$PY" -c 'import torch; print(torch.__version__)')"
