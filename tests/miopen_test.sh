#!/usr/bin/env bash
# The MIOpen plugin end to end against the simulated MIOpen (tests/fake_miopen): the standard
# suite in all three directions on "hip:0" ("gfx1010 (simulated)"); every solver must be
# classified as planted (GEMM hangs above 42x42, GemmBwdRest and ConvOclBwdWrW2<n> fault,
# ConvOclBwdWrW53 is wrong, the rest verify or decline), the parent must never hang, `convguard
# env` must print exactly seed 003's switches, and the doctor must report the evidence.
# Usage: miopen_test.sh path/to/convguard path/to/convguard_miopen.so path/to/libfake_miopen.so
set -u
CG=$(readlink -f "$1")
PLUGIN=$(readlink -f "$2")
FAKE=$(readlink -f "$3")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP
DB=$TMP/m.db
source "$(dirname "$0")/check_lib.sh"

# Without MIOpen the plugin says why and convguard goes on without it.
env -u CONVGUARD_MIOPEN_PATH -u CONVGUARD_HIP_PATH ROCM_PATH=$TMP/none \
  "$CG" probe --plugin "$PLUGIN" --device hip:0 --problem mb1ic3ih8oc4kh3 --db "$TMP/a.db" \
  >"$TMP/absent.txt" 2>&1
check "absent MIOpen: the plugin says what is missing" \
  grep -q "miopen: unavailable: .*is not installed (tried " "$TMP/absent.txt"
env -u CONVGUARD_MIOPEN_PATH -u CONVGUARD_HIP_PATH ROCM_PATH=$TMP/none \
  CONVGUARD_PLUGINS=$PLUGIN "$CG" driver --problem mb1ic3ih8oc4kh3 -t 1 >"$TMP/absent2.txt" 2>&1
check "absent MIOpen: convguard runs without it" grep -q "Verifies OK" "$TMP/absent2.txt"

# One HIP runtime: the plugin takes libamdhip64 from the libMIOpen it loaded (the simulated one
# links fake_rocm/libamdhip64.so.5, as the real one links libamdhip64), never on its own.
HIP=$(dirname "$FAKE")/fake_rocm/libamdhip64.so.5
env -u CONVGUARD_HIP_PATH CONVGUARD_MIOPEN_PATH=$HIP "$CG" probe --plugin "$PLUGIN" --device hip:0 \
  --problem mb1ic3ih8oc4kh3 --db "$TMP/h1.db" >"$TMP/hip1.txt" 2>&1
check "a libMIOpen that links no libamdhip64 is refused, saying so" \
  grep -q "cannot establish which HIP runtime .*links no libamdhip64 (DT_NEEDED: " "$TMP/hip1.txt"
CONVGUARD_MIOPEN_PATH=$FAKE CONVGUARD_HIP_PATH=$FAKE "$CG" probe --plugin "$PLUGIN" --device hip:0 \
  --problem mb1ic3ih8oc4kh3 --db "$TMP/h2.db" >"$TMP/hip2.txt" 2>&1
check "CONVGUARD_HIP_PATH naming another HIP than libMIOpen's is refused" \
  grep -q "CONVGUARD_HIP_PATH=.* is not the HIP runtime .* links against (.*fake_rocm/libamdhip64.so.5)" "$TMP/hip2.txt"

export CONVGUARD_MIOPEN_PATH=$FAKE
unset CONVGUARD_HIP_PATH
# Small budgets: the simulated GPU computes with the fp64 reference on the CPU (the 13-GFLOP
# seed-003 problem is skipped by --budget), statuses are what is tested (--timing 0), and a
# hang costs its 4 s deadline. (2 s, taken as given, once let a loaded machine record a healthy
# solver hang: ConvAsmBwdWrW3x3 on the 512x512 first layer's backward-weights, which the simulated
# GPU computes in fp64 on the CPU in about a second.)
start=$(date +%s)
timeout 840 "$CG" probe --plugin "$PLUGIN" --device hip:0 --suite standard \
  --directions fwd,bwd_data,bwd_weights --db "$DB" --timing 0 --budget 0.25 --timeout 4 \
  >"$TMP/probe.log" 2>&1
rc=$?
echo "probe: exit $rc in $(($(date +%s) - start)) s; $(grep 'probe finished' "$TMP/probe.log")"
# bench/doc_logs.sh keeps this log as the evidence behind docs/miopen.md's figures.
if [ -n "${CONVGUARD_LOG_DIR:-}" ]; then
  { echo "\$ $CG probe --plugin convguard_miopen.so --device hip:0 --suite standard --directions fwd,bwd_data,bwd_weights --timing 0 --budget 0.25 --timeout 4   # CONVGUARD_MIOPEN_PATH=libfake_miopen.so"
    cat "$TMP/probe.log"; echo "wall: $(($(date +%s) - start)) s"; } >"$CONVGUARD_LOG_DIR/miopen_standard_3dir.log"
fi
check "the probe finished (the parent never hung)" test "$rc" -ne 124
check "the device is the simulated gfx1010" grep -q "gfx1010 (simulated)" "$TMP/probe.log"
check "its description names the HIP runtime libMIOpen links" \
  grep -q "linking HIP .*fake_rocm/libamdhip64.so.5" "$TMP/probe.log"

"$CG" db show --db "$DB" --json >"$TMP/trials.jsonl"
check "every MIOpen solver classified as planted" python3 - "$TMP/trials.jsonl" <<'PY'
import json, re, sys
bad, seen = [], {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    name, st, prob = r["solver"][len("miopen:"):], r["status"], r["problem"]
    seen[st] = seen.get(st, 0) + 1
    if st in ("skipped", "unsupported"):
        continue
    h = int(re.search(r"ih(\d+)", prob).group(1))
    w = int(re.search(r"iw(\d+)", prob).group(1))
    gemm = name.startswith("Gemm")
    if name.startswith("ConvOclBwdWrW2") or name == "GemmBwdRest":
        want = "crash"
        if "Memory access fault by GPU" not in r.get("stderr_tail", ""):
            bad.append(f"{name} {prob}: crash without the GPU's message")
    elif name == "ConvOclBwdWrW53":
        want = "wrong"
    elif gemm and (h > 42 or w > 42):
        want = "hang"
    else:
        want = "ok"
    if st != want:
        bad.append(f"{name} {prob}: {st}, planted {want} ({r.get('reason', '')[:120]})")
print("statuses:", seen)
for b in bad[:20]:
    print("  ", b)
for st in ("ok", "hang", "crash", "wrong", "unsupported"):
    if not seen.get(st):
        bad.append(f"no trial is {st}")
sys.exit(1 if bad else 0)
PY

"$CG" env --db "$DB" --device "gfx1010 (simulated)" >"$TMP/env.sh" 2>&1
check "env: exactly seed 003's switches" sh -c "test \"\$(grep -v '^#' '$TMP/env.sh' | sort | tr '\n' ' ')\" = \"export MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2='0' export MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53='0' export MIOPEN_DEBUG_CONV_GEMM='0' \""
check "env: names the evidence" grep -q "ConvOclBwdWrW53 wrong" "$TMP/env.sh"
# The reproduce command of a crash reruns it through the driver on the simulated device.
cmd=$(python3 -c "
import json,sys
for l in open('$TMP/trials.jsonl'):
    r=json.loads(l)
    if r['solver']=='miopen:ConvOclBwdWrW53' and r['status']=='wrong': print(r['command']); break")
check "a recorded reproduce command names the plugin device" sh -c "echo '$cmd' | grep -q -- '--device hip:0'"
(cd "$TMP" && eval "${cmd/convguard driver/$CG driver}" >"$TMP/repro.log" 2>&1)
check "the reproduce command reproduces the wrong result" grep -q "Backward Convolution Weights FAILED" "$TMP/repro.log"
check "no MIOpen database folder left behind (killed workers' are removed by the next)" \
  sh -c "test -z \"\$(ls -A '$TMP'/convguard-miopen-u$(id -u)/ 2>/dev/null | grep -v '^kernels-')\""
check "MIOpen folders live in a private per-user parent (0700)" \
  sh -c "test \"\$(stat -c %a '$TMP'/convguard-miopen-u$(id -u))\" = 700"
# Stale folders: a dead worker's of this user is removed by the next worker; another user's, and
# one of another pid namespace, are left alone (a pid invisible here may be alive there).
ns=$(readlink /proc/self/ns/pid | tr -cd '0-9')
P=$TMP/convguard-miopen-u$(id -u)
mkdir -p "$P/$ns-4194000-dead" "$P/$ns-4194001-other" "$P/1-4194002-otherns"
[ "$(id -u)" -eq 0 ] && chown nobody "$P/$ns-4194001-other"
CONVGUARD_PLUGINS=$PLUGIN "$CG" driver --problem mb1ic3ih8oc4kh3ph1 --device hip:0 -S miopen:GemmFwdRest -F 1 >"$TMP/stale.log" 2>&1
check "a dead worker's stale folder is removed" test ! -e "$P/$ns-4194000-dead"
check "another pid namespace's folder is left alone" test -e "$P/1-4194002-otherns"
if [ "$(id -u)" -eq 0 ]; then
  check "another user's folder is left alone" test -e "$P/$ns-4194001-other"
fi
rm -rf "$P/$ns-4194001-other" "$P/1-4194002-otherns"

# The doctor reads the same evidence for a gfx1010 snapshot.
cat >"$TMP/snap.json" <<'JSON'
{"snapshot_version": 1, "gpus": [{"vendor": "AMD", "name": "simulated", "arch": "gfx1010 (simulated)"}],
 "versions": {"rocm": "5.7.1", "miopen": "2.20.0"}, "env": {}}
JSON
"$CG" doctor --snapshot "$TMP/snap.json" --db "$DB" >"$TMP/doctor.txt" 2>&1
check "doctor: solvers recorded bad on this GPU" grep -q "WARN.*solver(s) recorded hang, crash or wrong on gfx1010 (simulated)" "$TMP/doctor.txt"

echo "$failures failure(s)"
test "$failures" -eq 0
