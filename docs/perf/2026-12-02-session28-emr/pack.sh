#!/bin/bash
# devbin/cpu28.tar.xz: the release bench and unit tests from BUILD (default build/release),
# stripped, their CUDA fat binaries zeroed (CPU-only runs, CUDA_VISIBLE_DEVICES=), plus the shared
# libraries they load that a bare host may lack (ldd, less glibc's), and OpenBLAS.
set -euo pipefail
B=${1:-build/release}
T=$(mktemp -d); mkdir -p $T/lib
cp $B/bench/convguard_bench $B/unit_tests $T/ 2>/dev/null || cp $B/bench/convguard_bench $B/tests/unit_tests $T/
for f in $T/convguard_bench $T/unit_tests; do
  strip $f
  python3 - "$f" <<'PY'
import sys, subprocess
f = sys.argv[1]
for line in subprocess.run(["readelf", "-SW", f], capture_output=True, text=True).stdout.splitlines():
    p = line.replace("[ ", "[").split()
    if len(p) > 6 and p[1] == ".nv_fatbin":
        off, size = int(p[4], 16), int(p[5], 16)
        with open(f, "r+b") as h:
            h.seek(off); h.write(bytes(size))
        print(f, "fatbin zeroed", size)
PY
done
for f in $T/convguard_bench $T/unit_tests /usr/lib/x86_64-linux-gnu/libdnnl.so.2; do ldd $f; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux)[.-]' | xargs -I{} cp -L {} $T/lib/
cp -L /usr/lib/x86_64-linux-gnu/libdnnl.so.2 $T/lib/
cp -L /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 $T/lib/
ls -la $T $T/lib
tar -C $T -cJf devbin/cpu28.tar.xz . && ls -la devbin/cpu28.tar.xz && rm -rf $T
