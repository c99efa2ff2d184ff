#!/usr/bin/env bash
# Packs what the GPU machine needs to build the PyTorch extension against its own PyTorch (with
# CUDA): this build's static libraries (the GPU backend included), fmt's headers and library, the
# convguard binary (probe workers) and the cuDNN plugin. Then, on the device:
#   run(command="bash scripts/torch_gpu_build.sh && ...", carry=["devtorch"])
# (docs/pytorch.md "On the GPU"). devtorch/ is ignored by git (.git/info/exclude).
set -euo pipefail
B=${BUILD:-build/release}
D=${DEVTORCH:-devtorch}
rm -rf "$D"
mkdir -p "$D/lib" "$D/include" "$D/bin"
for lib in convguard_probe convguard convguard_core convguard_cpu convguard_gpu convguard_transforms; do
  cp "$B/lib$lib.a" "$D/lib/"
done
cp -r /usr/include/fmt "$D/include/"
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 "$D/lib/libfmt.so.9"
cp "$B/convguard" "$D/bin/"
cp "$B/convguard_cudnn.so" "$D/bin/" 2>/dev/null || true
du -sh "$D"
