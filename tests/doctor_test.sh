#!/usr/bin/env bash
# convguard doctor on snapshots of the seeds' machines (tests/doctor/*.json): each finding the
# seeds' lore predicts, the exit status by worst finding, --json, --save-snapshot of this
# machine, and clear errors for bad input. Usage: doctor_test.sh path/to/convguard
set -u
CG=$1
SNAP=$(dirname "$0")/doctor
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/empty.db
source "$(dirname "$0")/check_lib.sh"
# doctor_on SNAPSHOT EXPECTED-EXIT CHECK STATUS [FINDING-PATTERN]: one row of the table.
doctor_on() {
  local snap=$1 want_rc=$2 check_name=$3 status=$4 pattern=${5:-}
  "$CG" doctor --snapshot "$SNAP/$snap" --db "$DB" --json >"$TMP/out.json" 2>&1
  local rc=$?
  check "$snap: exit $want_rc" test "$rc" -eq "$want_rc"
  check "$snap: '$check_name' is $status${pattern:+ ($pattern)}" python3 - "$TMP/out.json" "$check_name" "$status" "$pattern" <<'PY'
import json, re, sys
out = json.load(open(sys.argv[1]))
rows = [f for f in out["findings"] if f["check"] == sys.argv[2]]
ok = bool(rows) and rows[0]["status"] == sys.argv[3] and re.search(sys.argv[4], rows[0]["finding"])
if not ok:
    print("   ", rows)
sys.exit(0 if ok else 1)
PY
}
doctor_on seed001_rocm624.json 3 "gfx1010 (RDNA1) on ROCm 6+" FAIL "ROCm 6.2.4"
doctor_on seed001_rocm57.json 3 "torch built against NumPy 1.x with NumPy 2" FAIL "NumPy 2.1.1"
doctor_on seed001_rocm57.json 3 "gfx1010 kernels or HSA_OVERRIDE_GFX_VERSION" WARN "gfx1030"
doctor_on seed001_rocm57.json 3 "gfx1010 (RDNA1) on ROCm 6+" PASS
doctor_on seed001_rocm52_py312.json 3 "torch 1.13.1 needs Python <= 3.10" FAIL "Python 3.12"
doctor_on seed002_rocm52_torch222.json 1 "torch's ROCm build matches the installed ROCm" WARN \
  "targets ROCm 5.7 but ROCm 5.2.0.*seed 001 reports HSA aperture violations.*seed 002 reports"
doctor_on seed002_rocm52_torch222.json 1 "GEMM convolutions forced on gfx1010" PASS
doctor_on bad_switches.json 3 "MIOpen switch values" FAIL "MIOPEN_DEBUG_CONV_GEMM='maybe'"
doctor_on bad_switches.json 3 "GEMM convolutions forced on gfx1010" WARN "hang on inputs larger than 42x42"
doctor_on seed001_working.json 0 "torch's ROCm build matches the installed ROCm" PASS

"$CG" doctor --snapshot "$SNAP/seed001_rocm624.json" --db "$DB" >"$TMP/table.txt" 2>&1
check "table: a fix line under a FAIL" grep -q "fix: use ROCm 5.2" "$TMP/table.txt"
check "table: the worst status" grep -qx "worst: FAIL" "$TMP/table.txt"

# This machine: a snapshot is written and reads back.
"$CG" doctor --save-snapshot "$TMP/here.json" --db "$DB" >/dev/null 2>&1
check "--save-snapshot writes a snapshot" python3 -c "import json; s=json.load(open('$TMP/here.json')); assert s['snapshot_version'] == 1"
"$CG" doctor --snapshot "$TMP/here.json" --db "$DB" >/dev/null 2>&1
rc=$?
check "a saved snapshot checks (exit 0, 1 or 3; got $rc)" sh -c "test $rc -eq 0 || test $rc -eq 1 || test $rc -eq 3"

# Bad input: named, exit 2.
echo "not json" >"$TMP/bad.json"
"$CG" doctor --snapshot "$TMP/bad.json" >"$TMP/err.txt" 2>&1
check "bad snapshot: exit 2" test $? -eq 2
check "bad snapshot: names the flag and the file" grep -q "\-\-snapshot $TMP/bad.json: not JSON" "$TMP/err.txt"
"$CG" doctor --snapshot "$TMP/missing.json" >"$TMP/err.txt" 2>&1
check "missing snapshot: exit 2" test $? -eq 2

echo "$failures failure(s)"
test "$failures" -eq 0
