#!/usr/bin/env bash
# CLI tests: exit codes, messages for bad input, the seeds' commands verbatim (smaller -n where
# the real one is too slow for CI), .npy round trips. Usage: cli_test.sh path/to/convguard
set -u
CG=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Commands without --db must not read or write the user's database (another convguard build's
# newer schema there once failed the flag checks below).
export CONVGUARD_DB=$TMP/default.db
failures=0

# expect CODE PATTERN -- command...: the exit code must be CODE and stdout+stderr match PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* (exit $rc, wanted $code; pattern '$pattern')"
    echo "$out" | tail -n 15 | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok:   $*"
  fi
}

# --- the seeds' commands -------------------------------------------------------------------
# Seed 003's MIOpenDriver command verbatim, with -n 1024 reduced to 8 for CI time.
expect 0 "Backward Convolution Data Verifies OK" -- \
  "$CG" driver conv -n 8 -c 256 -H 32 -W 32 -k 1 -y 5 -x 5 -p 2 -q 2 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 2 -t 1
# The 3D seed command verbatim: all three directions must verify.
out=$("$CG" driver conv -_ 3 -n 1 -c 3 -! 16 -H 32 -W 32 -k 16 -@ 3 -y 3 -x 3 -\$ 1 -p 1 -q 1 2>&1); rc=$?
if [ $rc -ne 0 ] || [ "$(grep -c 'Verifies OK' <<<"$out")" -ne 3 ]; then
  echo "FAIL: 3D seed command (exit $rc)"; echo "$out" | sed 's/^/    /'; failures=$((failures + 1))
else echo "ok:   3D seed command, 3 directions verified"; fi
expect 0 "Forward Convolution Verifies OK" -- "$CG" driver convfp16 -n 2 -c 16 -H 17 -W 33 -k 8 -p 1 -q 1 -F 1
expect 0 "Backward Convolution Weights Verifies OK" -- "$CG" driver convbfp16 -n 2 -c 16 -H 17 -W 17 -k 8 -F 4 -I NHWC -O NHWC -f NHWC
expect 0 "Verifies OK" -- "$CG" driver conv -n 2 -c 8 -k 4 -H 5 -W 5 -y 3 -x 3 -u 2 -v 2 -p 1 -q 1 -m trans -Y 1 -X 1 -F 1
expect 0 "oh17ow17" -- "$CG" driver conv -n 1 -c 4 -k 4 -H 17 -W 17 -y 4 -x 4 -z same -F 1
expect 0 "Elapsed: .* ms" -- "$CG" driver conv -n 1 -c 4 -H 9 -W 9 -k 4 -F 1 -t 1 -i 3
expect 0 "cpu:winograd:f4x4_3x3 +ok" -- "$CG" driver conv -n 1 -c 8 -H 12 -W 12 -k 8 -p 1 -q 1 -F 1 -S all
expect 0 "Verifies OK" -- "$CG" driver --problem "g4mb2ic4ih9oc4oh9kh3ph1" --solver cpu:depthwise --fill integer
expect 0 "Verifies OK" -- "$CG" driver --problem "--dir=BWD_W mb2ic3id5ih6iw6oc4od5oh6ow6kd3kh3kw3pd1ph1pw1" --threads 1

# --- bad input: exit 2 and a message that names the flag or field ---------------------------
expect 2 "unknown flag '-Q'" -- "$CG" driver conv -Q 3
expect 2 "-H \(--in_h\): 'abc' is not an integer" -- "$CG" driver conv -H abc
expect 2 "-c \(--in_channels\): missing value" -- "$CG" driver conv -c
expect 2 "groups" -- "$CG" driver conv -n 1 -c 3 -k 4 -g 2
expect 2 "ic \(input channels\): must be positive" -- "$CG" driver conv -n 1 -c 0
expect 2 "oh \(output size\): empty output" -- "$CG" driver conv -n 1 -H 2 -W 2 -y 5 -x 5
expect 2 "-F \(--forw\)" -- "$CG" driver conv -F 9
expect 2 "-I \(--in_layout\)" -- "$CG" driver conv -I NCDHW
expect 2 "-m \(--mode\)" -- "$CG" driver conv -m sideways
expect 2 "-z \(--pad_mode\)" -- "$CG" driver conv -z odd
expect 2 "unknown solver 'cpu:nope'" -- "$CG" driver conv -n 1 -S cpu:nope
expect 2 "unknown command 'convint8'" -- "$CG" driver convint8
expect 2 "--device" -- "$CG" driver conv --device cuda:0
expect 2 "unknown field 'zz'" -- "$CG" driver --problem "mb1ic3ih8oc4kh3zz1"
expect 2 "--suite: cannot open" -- "$CG" driver --suite "$TMP/none.txt"
printf 'mb1ic3ih8oc4kh3\nmb1ic0ih8oc4kh3\n' >"$TMP/bad.txt"
expect 2 "bad.txt:2: ic" -- "$CG" driver --suite "$TMP/bad.txt"
expect 2 "unknown command" -- "$CG" frobnicate

# --- hostile sizes: refused with the field named, never wrapped, never a crash ----------------
# A stride whose span times the element size wraps to 0 bytes (once: a heap overflow, recorded ok).
expect 2 "strides \(src\): 4611686018427387903 is out of range" -- "$CG" driver --problem 'mb1ic1ih1iw2oc1kh1kw1 --strides=1x1x1x4611686018427387903::' -F 1
expect 2 "x_strides: the strides address .* elements, more than any memory holds" -- "$CG" driver --problem 'mb1ic1ih1iw4oc1kh1kw1 --strides=1x1x1x140737488355328::' -F 1
# 10^11 images of 3x8x8: valid, but no memory here holds it: refused before any allocation.
expect 2 "need .* GiB of host memory; the limit is" -- "$CG" driver conv -n 99999999999 -c 3 -k 4 -H 8 -W 8 -F 1
expect 2 "need .* GiB of host memory; the limit is 0.0" -- "$CG" driver conv -n 64 -c 64 -k 64 -H 64 -W 64 -F 1 --memory-limit 1M
expect 2 "mb.*(out of range|more than any memory)" -- "$CG" driver --problem 'mb1000000000000000000ic1ih1oc1kh1' -F 1
expect 2 "kh: .*out of range" -- "$CG" driver --problem 'mb1ic1ih4oc1kh9223372036854775807' -F 1
expect 2 "k./d.: the dilated filter's size overflows|out of range" -- "$CG" driver --problem 'mb1ic1ih4oc1oh4kh1099511627776dh1099511627775' -F 1
expect 2 "flag -i \(--iter\): 2147483648 is out of range" -- "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 4 -i 2147483648
expect 2 "flag --threads: 4294967296 is out of range" -- "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 4 --threads 4294967296
expect 2 "flag -H \(--in_h\): .* is out of range" -- "$CG" driver conv -n 1 -c 1 -k 1 -H 99999999999999999 -W 4
expect 2 "flag -x \(--fil_w\): .* is out of range" -- "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 4 -x 4611686018427387904 -z same
# Found by fuzz/driver_flags.cpp: the sum for 'same' padding overflowed on the way (UBSan), though
# each flag is within its range; now summed with checks, and the padding refused by validate().
expect 2 "iw/kw/dw/pw: sizes overflow" -- "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 1099511627776 -x 1099511627776 -j 8388608 -z same
expect 2 "--memory-limit: .*unknown suffix" -- "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 4 --memory-limit 3X
# The environment's CONVGUARD_* values are checked like the flags (an invalid one was ignored:
# CONVGUARD_MEMORY_LIMIT=8gb meant "90% of free memory"), by every command, before it runs.
expect 2 "need .* GiB of host memory; the limit is 0.0" -- env CONVGUARD_MEMORY_LIMIT=1M "$CG" driver conv -n 64 -c 64 -k 64 -H 64 -W 64 -F 1
expect 2 "environment variable CONVGUARD_MEMORY_LIMIT: memory limit '8gb': unknown suffix" -- env CONVGUARD_MEMORY_LIMIT=8gb "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 4 -F 1
expect 2 "environment variable CONVGUARD_MEMORY_LIMIT: memory limit 'lots'" -- env CONVGUARD_MEMORY_LIMIT=lots "$CG" probe --db "$TMP/env.db" --problem 'mb1ic1ih4oc1kh1'
expect 2 "environment variable CONVGUARD_MEMORY_LIMIT: .*between 1 byte" -- env CONVGUARD_MEMORY_LIMIT=0 "$CG" db show --db "$TMP/env.db"
expect 2 "environment variable CONVGUARD_CPU_ISA: 'avx-2' is not baseline, avx2 or avx512" -- env CONVGUARD_CPU_ISA=avx-2 "$CG" solvers
# Capped at AVX2, the default pick (the list's first applicable solver) is an AVX2 copy
# (cpu:fwd_rows:avx2 since session 20; cpu:nchw_gemm:avx2 before), never an AVX-512 one.
expect 0 "cpu:[a-z0-9_]*:avx2\]" -- env CONVGUARD_CPU_ISA=avx2 "$CG" driver conv -n 1 -c 3 -k 4 -H 8 -W 8 -F 1
expect 2 "environment variable CONVGUARD_BLAS=$TMP/none.so: cannot load" -- env CONVGUARD_BLAS="$TMP/none.so" "$CG" driver conv -n 1 -c 1 -k 1 -H 4 -W 4 -F 1
expect 2 "environment variable CONVGUARD_PLUGINS: $TMP/none.so: no such file" -- env CONVGUARD_PLUGINS="$TMP/none.so" "$CG" solvers
expect 2 "flag --timeout: 'inf' is not a finite number" -- "$CG" probe --problem 'mb1ic1ih4oc1kh1' --timeout inf
expect 2 "flag --budget: 'nan' is not a finite number" -- "$CG" probe --problem 'mb1ic1ih4oc1kh1' --budget nan
expect 2 "flag --timeout: -1 is out of range" -- "$CG" bisect --solver cpu:direct --problem 'mb1ic1ih4oc1kh1' --timeout -1
# Suite files: a directory, an unbounded line and a NUL byte are errors, not empty suites.
mkdir -p "$TMP/suite_dir"
expect 2 "is a directory" -- "$CG" driver --suite "$TMP/suite_dir" -F 1
head -c 2000000 /dev/zero | tr '\0' 'a' >"$TMP/long_line.txt"
expect 2 "line longer than" -- "$CG" driver --suite "$TMP/long_line.txt" -F 1
printf 'mb1ic1ih4oc1kh1\0\n' >"$TMP/nul.txt"
expect 2 "NUL byte" -- "$CG" driver --suite "$TMP/nul.txt" -F 1

# -V 0 runs without verification: its rows say "unverified", never "ok".
expect 0 '"status": ?"unverified"' -- "$CG" driver conv -n 1 -c 4 -H 9 -W 9 -k 4 -F 1 -V 0 --json

# --- a solver that declines says why -----------------------------------------------------------
expect 0 "cpu:depthwise +declines +not depthwise" -- "$CG" solvers "mb1ic3ih8oc4kh3"
expect 0 "cpu:winograd:f2x2_3x3 +declines +needs a 3x3 filter" -- "$CG" solvers "mb1ic3ih8oc4kh5"
expect 1 "not applicable: needs stride 1" -- "$CG" driver --problem "mb1ic3ih8oc4kh3sh2" -S cpu:winograd:f2x2_3x3

# --- .npy round trip: save, reload, identical outputs; wrong shape is an error naming the file --
expect 0 "Verifies OK" -- "$CG" driver conv -n 2 -c 3 -H 7 -W 6 -k 5 -p 1 -q 1 -F 1 --seed 7 --save-dir "$TMP/a"
expect 0 "Verifies OK" -- "$CG" driver conv -n 2 -c 3 -H 7 -W 6 -k 5 -p 1 -q 1 -F 1 --load-dir "$TMP/a" --save-dir "$TMP/b" -I NHWC
for f in x.npy w.npy y.npy; do
  if cmp -s "$TMP/a/$f" "$TMP/b/$f"; then echo "ok:   $f identical after a reload in another layout";
  else echo "FAIL: $f differs after reload"; failures=$((failures + 1)); fi
done
if command -v python3 >/dev/null; then
  shape=$(python3 -c "
import ast,sys
d=open('$TMP/a/x.npy','rb').read(); n=d[8]|(d[9]<<8); h=ast.literal_eval(d[10:10+n].decode())
print(h['descr'], h['shape'], len(d)-10-n)")
  if [ "$shape" = "<f4 (2, 3, 7, 6) 1008" ]; then echo "ok:   x.npy header and size ($shape)";
  else echo "FAIL: x.npy header: $shape"; failures=$((failures + 1)); fi
fi
expect 2 "x.npy: shape must be \(2, 4, 7, 6\)" -- "$CG" driver conv -n 2 -c 4 -H 7 -W 6 -k 5 -F 1 --load-dir "$TMP/a"
expect 2 "x.npy: dtype must be <f2" -- "$CG" driver convfp16 -n 2 -c 3 -H 7 -W 6 -k 5 -p 1 -q 1 -F 1 --load-dir "$TMP/a"
expect 2 "dy.npy: cannot open" -- "$CG" driver conv -n 2 -c 3 -H 7 -W 6 -k 5 -p 1 -q 1 -F 2 --load-dir "$TMP/a"
# Hostile headers (fuzz/regressions/npy): a 4 GiB header length in a 20-byte file, and the expected
# text under another key of an f8 Fortran-order file: refused, nothing allocated.
FZ=$(dirname "$0")/../fuzz/regressions/npy
mkdir -p "$TMP/h1" "$TMP/h2" && cp "$TMP/a/w.npy" "$TMP/h1/" && cp "$TMP/a/w.npy" "$TMP/h2/"
cp "$FZ/huge_header_length" "$TMP/h1/x.npy"
expect 2 "x.npy: header length .* is not plausible" -- "$CG" driver conv -n 2 -c 3 -H 4 -W 5 -k 5 -F 1 --load-dir "$TMP/h1"
cp "$FZ/expected_text_under_another_key" "$TMP/h2/x.npy"
expect 2 "x.npy: (header: unexpected|dtype must be)" -- "$CG" driver conv -n 2 -c 3 -H 4 -W 5 -k 5 -F 1 --load-dir "$TMP/h2"
# A name that holds '"' (found by the fuzzer: it printed a string that did not parse back).
expect 2 "name: contains" -- "$CG" driver --problem 'mb1ic1ih4oc1kh1_nab"cd' -F 1

# --- JSON output parses and has one row per solver run -----------------------------------------
if command -v python3 >/dev/null; then
  rows=$("$CG" driver conv -n 1 -c 4 -H 8 -W 8 -k 4 -F 1 -S all --json | python3 -c "import json,sys; r=json.load(sys.stdin)['results']; print(len(r), all('command' in x for x in r))")
  if [ "$rows" = "$("$CG" solvers | grep -c "^cpu:") True" ]; then echo "ok:   --json rows ($rows)"; else echo "FAIL: --json rows: $rows"; failures=$((failures + 1)); fi
fi

echo "cli tests: $failures failure(s)"
[ "$failures" -eq 0 ]
