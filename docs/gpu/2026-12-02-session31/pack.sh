#!/bin/bash
# devbin/gp31.tar.xz: gpu_tests, gpu_bench and the cuDNN plugin from build/release, stripped (their
# CUDA images kept), the libraries they load that a bare host may lack, and conv1's suite line.
set -euo pipefail
T=$(mktemp -d); mkdir -p $T/lib
cp build/release/tests/gpu_tests build/release/bench/gpu_bench build/release/convguard_cudnn.so $T/
strip $T/gpu_tests $T/gpu_bench $T/convguard_cudnn.so
for f in $T/gpu_tests $T/gpu_bench; do ldd $f; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux|libcuda)[.-]' | xargs -I{} cp -L {} $T/lib/
grep conv1 data/suites/resnet50.txt > $T/conv1.txt
tar -C $T -cJf devbin/gp31.tar.xz . && ls -la devbin/gp31.tar.xz && rm -rf $T
