#!/usr/bin/env bash
# Several devices of one node in one sweep (issue 20), on simulated GPUs: the simulated HIP
# runtime (tests/fake_miopen/fake_hip.cpp) exposes FAKE_HIP_DEVICES identical gfx1010s, driven by
# the MIOpen plugin over the simulated MIOpen, whose planted GEMM hangs and seed-003 faults make
# workers die mid-sweep. `--device hip:all` must give the rows a one-device run gives (status per
# problem and solver, under the same fingerprint), every trial once (none lost, none twice), with
# every device taking trials; a device that faults for good, or never opens, loses only its own
# worker and its in-flight trial (recorded crash or hang, as one device records it), and the
# others finish the sweep. Bad --device lists are refused naming --device.
# Usage: multi_device_test.sh path/to/convguard path/to/convguard_miopen.so path/to/libfake_miopen.so
set -u
CG=$(readlink -f "$1")
PLUGIN=$(readlink -f "$2")
export CONVGUARD_MIOPEN_PATH=$(readlink -f "$3")
unset CONVGUARD_HIP_PATH
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP
source "$(dirname "$0")/check_lib.sh"

# Statuses only (--timing 0), a hang costs its 2 s --timeout; 44x44 makes the GEMMs hang.
PROBLEMS=(--problem mb1ic3ih8oc4kh3ph1 --problem mb1ic3ih44oc8oh44kh3ph1
          --directions fwd,bwd_data,bwd_weights)
FLAGS=(--plugin "$PLUGIN" --timing 0 --budget 0.25 --timeout 2 --workarounds off)
probe() {  # probe NAME DEVICES [flags...]: --json rows in NAME.jsonl, stderr in NAME.err
  local name=$1 devices=$2
  shift 2
  timeout 300 "$CG" probe "${FLAGS[@]}" --device "$devices" --db "$TMP/$name.db" --json "$@" \
    >"$TMP/$name.jsonl" 2>"$TMP/$name.err"
  echo $? >"$TMP/$name.rc"
}
rc_of() { cat "$TMP/$1.rc"; }
# The database's rows as "fingerprint | problem | solver | status", sorted.
rows() { db_rows "$CG" "$TMP/$1.db" --device; }
same_rows() { diff <(rows "$1") <(rows "$2") >"$TMP/$1-$2.diff"; }
# Every trial of the run printed once (none twice), each by a device of the list, the one its
# reproduce command names; and every trial of the reference run is there (none lost).
each_once() {  # each_once RUN REFERENCE DEVICES...
  python3 - "$TMP/$1.jsonl" "$TMP/$2.jsonl" "${@:3}" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ref = {(r["problem"], r["solver"]) for r in map(json.loads, open(sys.argv[2]))}
keys = [(r["problem"], r["solver"]) for r in rows]
bad = [k for k in set(keys) if keys.count(k) > 1]
bad += [r for r in rows if r["device_name"] not in sys.argv[3:] or
        f"--device '{r['device_name']}'" not in r["command"]]
bad += sorted(ref - set(keys)) + sorted(set(keys) - ref)
if bad:
    print("\n".join(map(str, bad[:10])))
sys.exit(1 if bad else 0)
PY
}
ran_on() {  # ran_on RUN DEVICE: how many trials DEVICE ran
  python3 -c "
import json, sys
print(sum(json.loads(l)['device_name'] == '$2' for l in open('$TMP/$1.jsonl')))"
}

# The reference: one simulated GPU, as every earlier test ran it.
FAKE_HIP_DEVICES=1 probe one hip:0 "${PROBLEMS[@]}"
check "one device: exit 0" test "$(rc_of one)" -eq 0
check "one device: its JSON rows do not name a device (unchanged output)" \
  python3 -c "import json,sys; sys.exit(any('device_name' in json.loads(l) for l in open('$TMP/one.jsonl')))"
check "one device: the planted faults and hangs are there" \
  python3 -c "
import json, sys
st = [json.loads(l)['status'] for l in open('$TMP/one.jsonl')]
sys.exit(0 if st.count('crash') >= 10 and st.count('hang') >= 2 else 1)"

# Three devices, all healthy; the planted faults and hangs kill whichever worker runs them.
FAKE_HIP_DEVICES=3 probe three hip:all "${PROBLEMS[@]}"
check "hip:all on 3 devices: exit 0" test "$(rc_of three)" -eq 0
check "hip:all: says it runs 3 devices, one worker each" \
  grep -q "on 3 devices (hip:0,hip:1,hip:2), one worker each" "$TMP/three.err"
check "hip:all: the rows equal the one-device run's" same_rows one three
check "hip:all: every trial once, none lost, each by the device its command names" \
  each_once three one hip:0 hip:1 hip:2
for d in hip:0 hip:1 hip:2; do
  check "hip:all: $d took trials ($(ran_on three $d))" test "$(ran_on three $d)" -gt 0
done
check "hip:all: the stored description names no one device (identical GPUs share it)" python3 -c "
import json, subprocess, sys
out = subprocess.run(['$CG', 'db', 'export', '--db', '$TMP/three.db'],
                     capture_output=True, text=True).stdout
d = {json.loads(l)['device_description'] for l in out.splitlines()}
print(d)
sys.exit(0 if d and not any(x.startswith('hip:') for x in d) else 1)"
check "hip:all: each crash keeps the GPU's message" python3 -c "
import json, subprocess, sys
out = subprocess.run(['$CG', 'db', 'show', '--db', '$TMP/three.db', '--json'],
                     capture_output=True, text=True).stdout
crashes = [r for r in map(json.loads, out.splitlines()) if r['status'] == 'crash']
sys.exit(0 if crashes and all('Memory access fault by GPU' in r['stderr_tail'] for r in crashes)
         else 1)"

# Workarounds (--workarounds auto): on a problem no plain solver verified, transforms are tried
# in order until one verifies; with several devices a problem's candidates are still tried one at
# a time, so the same ones run and the rest are "not needed", as with one device.
WA=(--solvers 'miopen:ConvOclBwdWrW2<1>,miopen:ConvOclBwdWrW53,miopen:GemmWrwUniversal'
    --problem mb1ic3ih8oc4kh3ph1 --problem mb1ic3ih44oc8oh44kh3ph1 --problem mb1ic4ih48oc4kh3ph1
    --directions bwd_weights --workarounds auto)
FAKE_HIP_DEVICES=1 probe wa_one hip:0 "${WA[@]}"
FAKE_HIP_DEVICES=3 probe wa_three hip:all "${WA[@]}"
check "workarounds: a transform verified and others were not needed (one device)" python3 -c "
import json, sys
r = [json.loads(l) for l in open('$TMP/wa_one.jsonl')]
ok = any(x['solver'].startswith('xform:') and x['status'] == 'ok' for x in r)
sys.exit(0 if ok and 'not needed' in open('$TMP/wa_one.err').read() else 1)"
check "workarounds: three devices record the rows one device does" same_rows wa_one wa_three

# A list, one device fragile: after its first fault or hang it cannot be opened again. Mostly
# faulting and hanging solvers, so hip:1 meets one; its worker is lost with that trial (recorded
# as the fault it was), and hip:0 and hip:2 finish the sweep.
FAULTY=(--solvers 'miopen:ConvOclBwdWrW2*,miopen:GemmWrwUniversal,miopen:ConvOclBwdWrW53,miopen:ConvDirectNaiveConvWrw'
        --problem mb1ic3ih8oc4kh3ph1 --problem mb1ic3ih44oc8oh44kh3ph1
        --problem mb1ic8ih12oc8kh3ph1 --directions bwd_weights)
FAKE_HIP_DEVICES=1 probe faulty_one hip:0 "${FAULTY[@]}"
mkdir -p "$TMP/state"
FAKE_HIP_DEVICES=3 FAKE_HIP_FRAGILE_DEVICES=1 FAKE_HIP_STATE_DIR=$TMP/state \
  probe fragile hip:0,hip:1,hip:2 "${FAULTY[@]}"
check "fragile hip:1: the probe says it lost hip:1 and exits 1 ($(rc_of fragile))" \
  bash -c "test $(rc_of fragile) -eq 1 && grep -q 'device lost: hip:1: worker start-up failed' '$TMP/fragile.err'"
check "fragile hip:1: the rows equal the one-device run's" same_rows faulty_one fragile
check "fragile hip:1: every trial once, none lost" each_once fragile faulty_one hip:0 hip:1 hip:2
check "fragile hip:1: its last trial is the fault that took it" python3 -c "
import json, sys
mine = [r for r in map(json.loads, open('$TMP/fragile.jsonl')) if r['device_name'] == 'hip:1']
sys.exit(0 if mine and mine[-1]['status'] in ('crash', 'hang') else 1)"
check "fragile hip:1: hip:0 and hip:2 finished the sweep" \
  bash -c "test $(ran_on fragile hip:0) -gt 0 && test $(ran_on fragile hip:2) -gt 0"

# A hang under a derived deadline is confirmed by a second try; when the hang took the device
# with it (fragile: no worker can open it again), the first try's hang is recorded, saying it is
# not confirmed, rather than the start-up failure as the solver's `error`.
mkdir -p "$TMP/state1"
FAKE_HIP_DEVICES=1 FAKE_HIP_FRAGILE_DEVICES=0 FAKE_HIP_STATE_DIR=$TMP/state1 timeout 120 \
  "$CG" probe --plugin "$PLUGIN" --timing 0 --workarounds off --device hip:0 \
  --solvers miopen:GemmWrwUniversal --problem mb1ic3ih44oc8oh44kh3ph1 --directions bwd_weights \
  --db "$TMP/unconfirmed.db" --json >"$TMP/unconfirmed.jsonl" 2>"$TMP/unconfirmed.err"
check "a hang that took its device: recorded hang, not confirmed, naming why" python3 -c "
import json, sys
r = [json.loads(l) for l in open('$TMP/unconfirmed.jsonl')]
sys.exit(0 if len(r) == 1 and r[0]['status'] == 'hang' and
         'not confirmed: a second try could not start' in r[0]['reason'] else 1)"

# A device that comes back from a fault as another (a reset that reordered the cards): one device,
# so its restarts are the worker's own. Nothing after the change is recorded under the first
# fingerprint or the second; those trials are errors naming the change, and the sweep ends.
mkdir -p "$TMP/state2"
FAKE_HIP_DEVICES=1 FAKE_HIP_CHANGING_DEVICES=0 FAKE_HIP_STATE_DIR=$TMP/state2 \
  probe changed hip:0 "${FAULTY[@]}"
check "a device that changed on restart: the sweep ends (exit $(rc_of changed)), its later trials are errors naming it" \
  python3 -c "
import json, sys
r = [json.loads(l) for l in open('$TMP/changed.jsonl')]
bad = [x for x in r if x['status'] in ('crash', 'hang')]
changed = [x for x in r if x['status'] == 'error' and 'fingerprint changed on restart' in x['reason']]
ok_after = [x for x in r[r.index(bad[0]) + 1:] if x['status'] == 'ok'] if bad else ['no fault']
sys.exit(0 if bad and changed and not ok_after and len(r) == len(open('$TMP/faulty_one.jsonl').readlines()) else 1)"
check "a device that changed on restart: no row under the second fingerprint" \
  bash -c "! rows changed | grep -q 'RX 5700'"

# A device that never opens: left out at start, the others run everything.
FAKE_HIP_DEVICES=3 FAKE_HIP_DEAD_DEVICES=0 probe dead hip:all "${FAULTY[@]}"
check "dead hip:0: exit 1, naming it" \
  bash -c "test $(rc_of dead) -eq 1 && grep -q 'device lost: hip:0: worker start-up failed' '$TMP/dead.err'"
check "dead hip:0: the rows equal the one-device run's" same_rows faulty_one dead
check "dead hip:0: every trial once, by hip:1 and hip:2" each_once dead faulty_one hip:1 hip:2

# Two kinds of card in one node (hip:2 an RX 5700 XT, another fingerprint): each kind gets the
# whole trial list, hip:0 and hip:1 sharing theirs, so both kinds' rows equal a one-device run's.
FAKE_HIP_DEVICES=3 FAKE_HIP_OTHER_MODEL=2 probe mixed hip:all "${FAULTY[@]}"
check "two kinds: exit 0, each kind said" \
  bash -c "test $(rc_of mixed) -eq 0 && grep -q '^device hip:[01]: AMD Radeon RX 5600' '$TMP/mixed.err' &&
           grep -q '^device hip:2: AMD Radeon RX 5700' '$TMP/mixed.err' &&
           test \$(grep -c 'another fingerprint: a trial list of its own' '$TMP/mixed.err') -eq 1"
rows mixed | grep 'RX 5600' >"$TMP/mixed5600.rows"
rows mixed | grep 'RX 5700' | sed 's/RX 5700 XT (simulated)|gfx1010 (simulated)|cus=40/RX 5600 XT (simulated)|gfx1010 (simulated)|cus=36/' \
  >"$TMP/mixed5700.rows"
check "two kinds: the RX 5600 XTs' rows equal the one-device run's" \
  diff "$TMP/mixed5600.rows" <(rows faulty_one)
check "two kinds: the RX 5700 XT's rows have the same statuses" \
  diff "$TMP/mixed5700.rows" <(rows faulty_one)
grep '"device_name":"hip:2"' "$TMP/mixed.jsonl" >"$TMP/mixed_b.jsonl"
grep -v '"device_name":"hip:2"' "$TMP/mixed.jsonl" >"$TMP/mixed_a.jsonl"
check "two kinds: hip:0 and hip:1 ran every trial once between them" \
  each_once mixed_a faulty_one hip:0 hip:1
check "two kinds: hip:2 ran every trial once" each_once mixed_b faulty_one hip:2

# Bad lists: refused before anything runs, naming --device, exit 2.
refused() {  # refused DEVICES [FAKE_HIP_DEVICES]
  local out
  out=$(FAKE_HIP_DEVICES=${2:-2} "$CG" probe --plugin "$PLUGIN" --device "$1" \
    --problem mb1ic3ih8oc4kh3 --db "$TMP/bad.db" 2>&1)
  local rc=$?
  echo "  $1: $out" | head -1
  test $rc -eq 2 && [[ $out == *"--device: '"* ]]
}
for bad in cuda:x hip:x hip:0,hip:0 hip:all,hip:1 hip:7 hip:-1 'hip: 1' gpu:0 hip:; do
  check "--device $bad is refused naming --device" refused "$bad"
done
check "no bad-list run wrote a trial" \
  bash -c "! test -e '$TMP/bad.db' || test -z \"\$('$CG' db show --db '$TMP/bad.db' --json)\""
finish
