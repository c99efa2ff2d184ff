#!/usr/bin/env bash
# Probe tests with the chaos plugin: classification of every misbehaviour, the parent never
# hangs, a hang costs its deadline, reruns skip known-bad trials, a killed prober loses nothing
# finished and its in-flight trial is attributed, a second prober is refused, the database stays
# consistent. Usage: probe_test.sh path/to/convguard path/to/convguard_chaos.so
set -u
CG=$1
CHAOS=$2
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
DB=$TMP/t.db
source "$(dirname "$0")/check_lib.sh"
status_of() {  # status_of SOLVER [PROBLEM-SUBSTRING]
  "$CG" db show --db "$DB" --json | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l)
    if r['solver']=='$1' and '${2:-}' in r['problem']: print(r['status']); break"
}
status_exact() {  # status_exact SOLVER CANONICAL-PROBLEM
  "$CG" db show --db "$DB" --json | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l)
    if r['solver']=='$1' and r['problem']=='$2': print(r['status']); break"
}
P='mb1ic3ih8oc4kh3ph1'
timeout 120 "$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:*' --skip-solvers 'chaos:slow_2s' --problem "$P" --timeout 2 >"$TMP/first.log" 2>&1
rc=$?
check "probe exits 0 (rc $rc)" test "$rc" -eq 0
# Three hangs at 2 s each: the probe's own account of what they cost (the time from each hanging
# trial's start to its worker's kill) must be their deadlines plus little, not a confirmation rerun
# or a stuck kill. Not the whole run's wall time: on a loaded machine worker starts and the other
# trials take longer, which is not what this checks.
hang_cost=$(grep -oE 'hangs cost [0-9.]+ s' "$TMP/first.log" | grep -oE '[0-9.]+' | tail -1)
check "three hangs cost their deadlines, not more (${hang_cost:-?} s)" \
  python3 -c "import sys; sys.exit(0 if 0 < float('${hang_cost:-0}') < 3*2 + 1.5 else 1)"
for pair in slow_2s:skip good:ok hang_busy:hang hang_sleep:hang deadlock:hang segfault:crash abort:crash sigbus:crash \
            sigfpe:crash exit3:crash wrong:wrong nan:wrong unwritten:wrong oom:oom error:error slow:ok \
            hang_above_42:ok hang_16_32_above_32:ok fault_bwd_weights:ok; do
  s=${pair%%:*}; want=${pair#*:}
  [ "$want" = skip ] && continue
  got=$(status_of "chaos:$s")
  check "chaos:$s is $want (got $got)" test "$got" = "$want"
done
check "segfault records signal 11" sh -c "\"$CG\" db show --db \"$DB\" --json | grep '\"chaos:segfault\"' | grep -q '\"signal\":11'"
check "abort keeps the worker's stderr tail" sh -c "\"$CG\" db show --db \"$DB\" --json | grep '\"chaos:abort\"' | grep -q 'Memory access fault'"
check "every row has a reproduce command" sh -c "\"$CG\" db show --db \"$DB\" --json | grep -c 'convguard driver --problem' | grep -qx 18"

# Slow but correct is not a hang: 2 s a run against a first-run deadline of ~3 s (default
# deadlines, no --timeout); the heartbeat after the first run sizes the rest.
"$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:slow_2s' --problem "$P" >/dev/null 2>&1
check "chaos:slow_2s (2 s a run) is ok, not hang" test "$(status_of chaos:slow_2s)" = ok

# --slow-factor: a first run 10x slower than a verified one is stopped, recorded skipped with why
# (not hang, not ok). A vendor's (plugin) solvers run to the end unless the flag is given, and a
# solver named exactly in --solvers always does. A fresh database each, so nothing is reused.
slow_probe() {  # slow_probe DB SOLVERS [FLAGS...]
  local db=$1 solvers=$2; shift 2
  timeout 60 "$CG" probe --db "$db" --plugin "$CHAOS" --solvers "$solvers" --problem "$P" "$@" >"$db.out" 2>&1
}
slow_status() {  # slow_status DB SOLVER: status|reason
  "$CG" db show --db "$1" --json | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l)
    if r['solver']=='$2': print(r['status'] + '|' + r['reason']); break"
}
slow_probe "$TMP/slow1.db" 'chaos:good,chaos:slow_2*' --slow-factor 10
got=$(slow_status "$TMP/slow1.db" chaos:slow_2s)
check "--slow-factor 10: chaos:slow_2s stopped, skipped (got ${got%%|*})" test "${got%%|*}" = skipped
check "--slow-factor 10: the reason names the limit and the faster solver" \
  sh -c "echo \"\$1\" | grep -q 'too slow to be chosen: stopped after .* ms with its first run unfinished.*10x the fastest verified first run on this problem (chaos:good'" _ "$got"
check "--slow-factor 10: chaos:good still ok" test "$(slow_status "$TMP/slow1.db" chaos:good | cut -d'|' -f1)" = ok
# Rerun: chaos:good is reused, not run, and its recorded first run still sets the limit.
slow_probe "$TMP/slow1.db" 'chaos:good,chaos:slow_2*' --slow-factor 10
got=$(slow_status "$TMP/slow1.db" chaos:slow_2s)
check "--slow-factor 10 on a rerun: a reused verified solver sets the limit (got ${got%%|*})" test "${got%%|*}" = skipped
# ... and the stopped trial itself is reused, not stopped again on every rerun: it had run past
# the same limit (its row's first_ms); --force runs it (and stops it) again.
check "--slow-factor 10 on a rerun: the stopped trial is reused ($(tail -1 "$TMP/slow1.db.out"))" \
  grep -q "2 reused" "$TMP/slow1.db.out"
slow_probe "$TMP/slow1.db" 'chaos:good,chaos:slow_2*' --slow-factor 10 --force
check "--slow-factor 10 --force: run and stopped again ($(tail -1 "$TMP/slow1.db.out"))" \
  grep -q "1 ok, 1 skipped" "$TMP/slow1.db.out"
# Bad evidence is never replaced by a stop: with --retry-bad a recorded hang is retried to its
# deadline and stays a hang, not `skipped` (which would drop it from env's skip list).
slow_probe "$TMP/slow6.db" 'chaos:good,chaos:hang_s*' --timeout 2
slow_probe "$TMP/slow6.db" 'chaos:good,chaos:hang_s*' --timeout 2 --retry-bad --slow-factor 10
got=$(slow_status "$TMP/slow6.db" chaos:hang_sleep)
check "--retry-bad --slow-factor 10: a recorded hang is retried as a hang (got ${got%%|*})" \
  sh -c "[ '${got%%|*}' = hang ] && grep -q '1 hang' '$TMP/slow6.db.out'"
slow_probe "$TMP/slow2.db" 'chaos:good,chaos:slow_2*'
got=$(slow_status "$TMP/slow2.db" chaos:slow_2s)
check "default: a plugin's slow solver runs to the end (got ${got%%|*})" test "${got%%|*}" = ok
# Where the time went: the results table's "trials s" column (this command's trials of the
# problem), and each --json row's trial_s. chaos:slow_2s sleeps 2 s in its one run.
spent=$(awk '/trials s/ {getline; print substr($0, 42)}' "$TMP/slow2.db.out" | awk '{print $3}')
check "the table says what the problem's trials took (${spent:-?} s, at least 2)" \
  python3 -c "import sys; sys.exit(0 if float('${spent:-0}') >= 1.95 else 1)"
slow_probe "$TMP/slow5.db" 'chaos:good,chaos:slow_2*' --json
check "--json: trial_s per row (chaos:slow_2s at least 2 s, chaos:good under it)" python3 -c "
import json, sys
rows = {r['solver']: r for r in (json.loads(l) for l in open('$TMP/slow5.db.out') if l.startswith('{'))}
sys.exit(0 if rows['chaos:slow_2s']['trial_s'] >= 1.95 and 0 < rows['chaos:good']['trial_s'] < rows['chaos:slow_2s']['trial_s'] else 1)"
slow_probe "$TMP/slow3.db" 'chaos:good,chaos:slow_2s' --slow-factor 10
got=$(slow_status "$TMP/slow3.db" chaos:slow_2s)
check "--slow-factor 10: a solver named exactly runs to the end (got ${got%%|*})" test "${got%%|*}" = ok
"$CG" probe --db "$TMP/slow4.db" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" --slow-factor 0.5 >"$TMP/slow4.log" 2>&1
rc=$?
check "--slow-factor 0.5 is refused (rc $rc), naming the flag" sh -c "[ $rc -ne 0 ] && grep -q -- '--slow-factor' '$TMP/slow4.log'"

# The seeds' boundaries: hang above 42x42 (seed 002), 16->32 above 32x32 (seed 004), fault in
# backward-weights (seed 003).
"$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:hang_above_42,chaos:hang_16_32_above_32' \
  --problem 'mb1ic16ih42oc32oh42kh3ph1' --problem 'mb1ic16ih43oc32oh43kh3ph1' --problem 'mb1ic16ih32oc32oh32kh3ph1' --timeout 2 >/dev/null 2>&1
check "hang_above_42: ok at 42x42" test "$(status_of chaos:hang_above_42 ih42)" = ok
check "hang_above_42: hang at 43x43" test "$(status_of chaos:hang_above_42 ih43)" = hang
check "hang_16_32_above_32: ok at 32x32" test "$(status_of chaos:hang_16_32_above_32 ih32)" = ok
check "hang_16_32_above_32: hang at 42x42" test "$(status_of chaos:hang_16_32_above_32 ih42)" = hang
"$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:fault_bwd_weights' --problem "$P" --directions fwd,bwd_weights --timeout 5 >/dev/null 2>&1
check "fault_bwd_weights: crash in backward-weights" test "$(status_of chaos:fault_bwd_weights BWD_W)" = crash

# A rerun reuses ok (and unsupported) results and skips known-bad ones (hang, crash, wrong);
# error and oom may be transient and run again.
"$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:*' --problem "$P" --timeout 2 >"$TMP/second.log" 2>&1
check "rerun runs no ok, hang, crash or wrong trial again" sh -c "! grep -qE ' (ok|hang|crash|wrong) +g1' '$TMP/second.log'"
check "rerun says what it skipped (11 known bad)" test "$(grep -c '(known bad:' "$TMP/second.log")" -eq 11
check "rerun summary: 11 known bad, 6 reused" sh -c "grep -q '11 known bad' '$TMP/second.log' && grep -q '6 reused' '$TMP/second.log'"

# kill -9 of the parent during a trial: the in-flight trial is recorded as interrupted next time
# (not evidence: retried once, crash only if the prober dies during it again), and the worker dies
# with its prober (a zombie until init reaps it counts as dead).
DB2=$TMP/k.db
"$CG" probe --db "$DB2" --plugin "$CHAOS" --solvers 'chaos:good,chaos:hang_sleep' --problem "$P" --timeout 30 >/dev/null 2>&1 &
pid=$!
sleep 3
workers=$(pgrep -P $pid)
kill -9 $pid
wait $pid 2>/dev/null
sleep 0.3
check "no worker outlives a killed prober (${workers:-none found})" sh -c "test -n '$workers' && ! ps -o stat= -p '$(echo $workers | tr ' ' ,)' | grep -qv Z"
DB_SAVE=$DB; DB=$DB2
check "finished trial survived kill -9 of the prober" test "$(status_of chaos:good)" = ok
check "in-flight trial is recorded as running" test "$(status_of chaos:hang_sleep)" = running
"$CG" probe --db "$DB2" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" >"$TMP/third.log" 2>&1
check "next probe attributes it: interrupted, left running" sh -c "\"$CG\" db show --db \"$DB2\" --json | grep chaos:hang_sleep | grep '\"status\":\"interrupted\"' | grep -q 'left running'"
check "next probe says it recovered one" grep -q "recovered 1 trial" "$TMP/third.log"
# The prober dies during the same trial again: now it counts against the solver.
"$CG" probe --db "$DB2" --plugin "$CHAOS" --solvers 'chaos:hang_sleep' --problem "$P" --timeout 30 >/dev/null 2>&1 &
pid=$!
sleep 2.5
kill -9 $pid; wait $pid 2>/dev/null
"$CG" probe --db "$DB2" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" >/dev/null 2>&1
check "died during it twice: crash" sh -c "\"$CG\" db show --db \"$DB2\" --json | grep chaos:hang_sleep | grep '\"status\":\"crash\"' | grep -q 'twice in a row'"
# With two trials in flight (--jobs 2) a prober's death is neither's: both are interrupted, and
# their retries run one at a time, so the next death counts against the one running alone.
DB6=$TMP/jobs.db
running_rows() { "$CG" db show --db "$DB6" --json | grep -c '"status":"running"'; }
"$CG" probe --db "$DB6" --plugin "$CHAOS" --solvers 'chaos:hang_sleep,chaos:deadlock' --problem "$P" \
  --timeout 30 --jobs 2 >/dev/null 2>&1 &
pid=$!
sleep 3
kill -9 $pid; wait $pid 2>/dev/null
check "jobs 2: both trials were running when the prober died" test "$(running_rows)" -eq 2
"$CG" probe --db "$DB6" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" >/dev/null 2>&1
"$CG" probe --db "$DB6" --plugin "$CHAOS" --solvers 'chaos:hang_sleep,chaos:deadlock' --problem "$P" \
  --timeout 30 --jobs 2 >/dev/null 2>&1 &
pid=$!
sleep 3
kill -9 $pid; wait $pid 2>/dev/null
check "jobs 2: the retries ran one at a time (one row running at the second death)" \
  test "$(running_rows)" -eq 1
"$CG" probe --db "$DB6" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" >/dev/null 2>&1
check "jobs 2: the second death counts against the retry running alone, not the other" sh -c "
  test \$(\"$CG\" db show --db '$DB6' --json | grep -c '\"status\":\"crash\"') -eq 1 &&
  test \$(\"$CG\" db show --db '$DB6' --json | grep -c '\"status\":\"interrupted\"') -eq 1"
# Ctrl-C (SIGINT) during a trial: the sweep ends (exit 130), the trial in flight is interrupted by
# the user, what finished is kept, no worker is left, and the rerun completes it.
# in_slow_trial DB LOG SOLVERS: a sweep of SOLVERS (chaos:good, then chaos:slow_2s, ...) started in
# the background, returning once chaos:slow_2s is in its 2 s run; sets pid and workers.
in_slow_trial() {
  "$CG" probe --db "$1" --plugin "$CHAOS" --solvers "$3" --problem "$P" >"$2" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q 'chaos:good' "$2" && break; sleep 0.1; done
  sleep 0.5
  workers=$(pgrep -P $pid)
}
DB5=$TMP/int.db
in_slow_trial "$DB5" "$TMP/int.log" 'chaos:good,chaos:slow_2s,cpu:direct'
kill -INT $pid; wait $pid; rc=$?
sleep 0.2
check "Ctrl-C: exit 130 (rc $rc)" test "$rc" -eq 130
check "Ctrl-C: the trial in flight is interrupted by the user" sh -c "'$CG' db show --db '$DB5' --json | grep chaos:slow_2s | grep '\"status\":\"interrupted\"' | grep -q 'by the user'"
check "Ctrl-C: the finished trial is kept" sh -c "'$CG' db show --db '$DB5' --json | grep chaos:good | grep -q '\"status\":\"ok\"'"
check "Ctrl-C: no worker left (${workers:-none})" sh -c "test -n '$workers' && ! ps -o stat= -p '$(echo $workers | tr ' ' ,)' | grep -qv Z"
"$CG" probe --db "$DB5" --plugin "$CHAOS" --solvers 'chaos:good,chaos:slow_2s,cpu:direct' --problem "$P" >/dev/null 2>&1
check "Ctrl-C: the rerun completes the sweep, all ok" test "$("$CG" db show --db "$DB5" --json | grep -c '"status":"ok"')" -eq 3
# The stop signal reaches the worker too (Slurm's scancel signals every process of the job) and
# the prober sees the worker's death before its own stop: still interrupted, not a crash counted
# against the solver. Made deterministic: the prober is stopped while its worker is killed, then
# gets its SIGTERM and resumes. (CI on 167b73f: the Slurm test's scancel recorded no interrupted
# trial once.)
DB7=$TMP/both.db
in_slow_trial "$DB7" "$TMP/both.log" 'chaos:good,chaos:slow_2s'
kill -STOP $pid
kill -TERM $workers
sleep 0.3
kill -TERM $pid
kill -CONT $pid
wait $pid
check "stop signal to prober and worker, the worker's death seen first: interrupted by the user" \
  sh -c "'$CG' db show --db '$DB7' --json | grep chaos:slow_2s | grep '\"status\":\"interrupted\"' | grep -q 'the worker ended too'"
check "... and no crash recorded" sh -c "! '$CG' db show --db '$DB7' --json | grep -q '\"status\":\"crash\"'"
DB=$DB_SAVE

# kill -9 and Ctrl-C at 20 random points each: faults_test.sh.
KP="--problem mb1ic3ih8oc4kh3ph1 --problem mb1ic3ih9oc4kh3ph1 --problem mb1ic4ih8oc4kh3ph1 --problem mb2ic3ih8oc4kh3ph1"

# --jobs 2: two workers, each one thread; same classification as one worker.
"$CG" probe --db "$TMP/jobs.db" --plugin "$CHAOS" --solvers 'chaos:good,chaos:segfault,chaos:wrong,cpu:direct' $KP --jobs 2 --json >"$TMP/jobs.jsonl" 2>"$TMP/jobs.err"; rc=$?
check "--jobs 2: exit 0, 16 trials (rc $rc)" sh -c "test $rc -eq 0 && test \$(wc -l <'$TMP/jobs.jsonl') -eq 16"
check "--jobs 2: classified as with one worker" python3 -c "
import json, sys
want = {'chaos:good': 'ok', 'chaos:segfault': 'crash', 'chaos:wrong': 'wrong', 'cpu:direct': 'ok'}
rows = [json.loads(l) for l in open('$TMP/jobs.jsonl')]
sys.exit(0 if all(want[r['solver']] == r['status'] for r in rows) else 1)"
check "--jobs 2: the device records 1 thread per worker" sh -c "\"$CG\" db show --db '$TMP/jobs.db' --json | head -1 | grep -q 'threads=1'"
# --jobs 2 with workarounds: the workaround sweep runs on the same one device with two workers
# (it once took the two workers for two devices and refused to run).
"$CG" probe --db "$TMP/jobs_w.db" --plugin "$CHAOS" --solvers 'chaos:hang_above_42' \
  --problem mb1ic4ih48oc4kh3ph1 --jobs 2 --timeout 1 --timing 0 >"$TMP/jobs_w.txt" 2>&1; rc=$?
check "--jobs 2 with workarounds: exit 0 and a tile verifies (rc $rc)" \
  sh -c "test $rc -eq 0 && grep -qE 'xform:tile\([0-9x]+\):chaos:hang_above_42 +ok' '$TMP/jobs_w.txt'"
"$CG" probe --db "$TMP/jobs.db" --jobs 0 --problem "$P" >/dev/null 2>"$TMP/err"; rc=$?
check "--jobs 0: exit 2 naming the flag" sh -c "test $rc -eq 2 && grep -q -- '--jobs' '$TMP/err'"

# Two probes on one database: the second is refused with a message, the database stays sound.
"$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:hang_sleep' --problem 'mb1ic3ih9oc4kh3' --timeout 4 >/dev/null 2>&1 &
pid=$!
sleep 1.5
"$CG" probe --db "$DB" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" >"$TMP/second_probe.log" 2>&1
rc=$?
check "second concurrent probe refused (exit $rc)" test "$rc" -eq 3
ln -s "$DB" "$TMP/link.db"
"$CG" probe --db "$TMP/link.db" --plugin "$CHAOS" --solvers 'chaos:good' --problem "$P" >/dev/null 2>&1
rc=$?
check "the same database through a symlink is refused too (exit $rc)" test "$rc" -eq 3
check "refusal names the other probe" grep -q "another convguard probe (pid" "$TMP/second_probe.log"
wait $pid
check "database integrity_check ok" sh -c "\"$CG\" db check --db \"$DB\" | grep -qx ok"

# Selection: -S auto picks the fastest verified solver and never one recorded bad here.
CONVGUARD_PLUGINS=$CHAOS "$CG" driver --db "$DB" --problem "$P" -S auto >"$TMP/auto.log" 2>&1; rc=$?
check "-S auto verifies (exit $rc)" sh -c "test $rc -eq 0 && grep -q 'Verifies OK' '$TMP/auto.log'"
check "-S auto says why" grep -q "fastest verified on this device" "$TMP/auto.log"
check "-S auto names what it avoided" grep -q "avoided, recorded bad here: .*chaos:segfault (crash)" "$TMP/auto.log"
chosen=$(sed -n 's/^-S auto chose \([^:]*:[^:]*\): .*/\1/p' "$TMP/auto.log")
check "-S auto chose a solver recorded ok here ($chosen)" test "$(status_exact "$chosen" g1mb1ic3ih8iw8oc4oh8ow8kh3kw3sh1sw1ph1pw1)" = ok

# Export, import into a fresh database, merge again: same rows, nothing newer overwritten.
"$CG" db export --db "$DB" >"$TMP/export.jsonl"
rows=$(wc -l <"$TMP/export.jsonl")
"$CG" db import "$TMP/export.jsonl" --db "$TMP/copy.db" >"$TMP/import.log"
check "import copies every row ($rows)" grep -q "imported $rows trial(s); kept 0" "$TMP/import.log"
"$CG" db merge "$TMP/export.jsonl" --db "$TMP/copy.db" >"$TMP/merge.log"
check "merging the same evidence again keeps it all" grep -q "imported 0 trial(s); kept $rows" "$TMP/merge.log"
check "exported copy shows the same trials" sh -c "test \"\$(\"$CG\" db export --db '$TMP/copy.db' | wc -l)\" -eq $rows"
"$CG" db clear --db "$TMP/copy.db" >/dev/null 2>&1; rc=$?
check "db clear without --yes refuses (exit $rc)" test "$rc" -eq 2

# convguard env: the profile the evidence supports, each entry justified; nothing without evidence.
"$CG" env --db "$DB" >"$TMP/env.sh"
check "env skips the crashing solver" grep -q "^export CONVGUARD_SKIP_SOLVERS='.*chaos:segfault" "$TMP/env.sh"
check "env names the trials behind it" grep -q "^#   crash: g1mb1ic3ih8" "$TMP/env.sh"
check "env does not skip a solver with only good evidence" sh -c "! grep -q 'chaos:good' '$TMP/env.sh'"
check "env --shell fish" sh -c "\"$CG\" env --db \"$DB\" --shell fish | grep -q '^set -gx CONVGUARD_SKIP_SOLVERS'"
"$CG" env --db "$TMP/empty.db" >"$TMP/env_empty.sh"
check "env without bad evidence disables nothing" sh -c "grep -q 'nothing to disable' '$TMP/env_empty.sh' && ! grep -q '^export' '$TMP/env_empty.sh'"
"$CG" env --db "$DB" --shell tcsh >/dev/null 2>&1; rc=$?
check "env --shell tcsh: exit 2" test "$rc" -eq 2
. "$TMP/env.sh"
CONVGUARD_PLUGINS=$CHAOS CONVGUARD_SKIP_SOLVERS=$CONVGUARD_SKIP_SOLVERS "$CG" driver --problem "$P" -S chaos:segfault >/dev/null 2>&1; rc=$?
check "an explicit -S still runs a skipped solver (it crashes: rc $rc)" test "$rc" -ne 0

# convguard env for MIOpen evidence (as the MIOpen plugin records it, imported here): seed 003's
# failures give exactly the switches seed 003 arrived at by hand, and nothing the evidence does not
# support; the family switch says what else it disables; a verified alternative is named.
python3 - "$TMP/miopen.jsonl" <<'PY'
import json, sys
dev = "miopen|gfx1010 (simulated)|cus=36|rocm=5.2.3|miopen=2.16.0"
rows = [("GemmBwdRest", "--dir=BWD_D g1mb1ic16ih32iw32oc32oh32ow32kh3kw3sh1sw1ph1pw1", "crash"),
        ("ConvOclBwdWrW2<4>", "--dir=BWD_W g1mb1ic16ih32iw32oc32oh32ow32kh3kw3sh1sw1ph1pw1", "crash"),
        ("ConvOclBwdWrW2<2>", "--dir=BWD_W g1mb1ic16ih32iw32oc32oh32ow32kh3kw3sh1sw1ph1pw1", "crash"),
        ("ConvOclBwdWrW53", "--dir=BWD_W g1mb1ic16ih32iw32oc32oh32ow32kh3kw3sh1sw1ph1pw1", "wrong"),
        ("GemmFwdRest", "g1mb1ic16ih43iw43oc32oh43ow43kh3kw3sh1sw1ph1pw1", "hang"),
        ("ConvHipImplicitGemmV4R1Fwd", "g1mb1ic16ih43iw43oc32oh43ow43kh3kw3sh1sw1ph1pw1", "ok"),
        ("ConvBinWinogradRxSf2x3g1", "g1mb1ic16ih43iw43oc32oh43ow43kh3kw3sh1sw1ph1pw1", "ok")]
with open(sys.argv[1], "w") as f:
    for solver, problem, status in rows:
        f.write(json.dumps({"device": dev, "device_description": "gfx1010 (simulated)",
                            "problem": problem, "solver": "miopen:" + solver, "status": status,
                            "reason": "", "started_at": "2026-11-22T10:00:00Z",
                            "finished_at": "2026-11-22T10:00:01Z", "command": ""}) + "\n")
PY
"$CG" db import "$TMP/miopen.jsonl" --db "$TMP/miopen.db" >/dev/null 2>&1
"$CG" env --db "$TMP/miopen.db" --device gfx1010 >"$TMP/miopen_env.sh" 2>&1
check "env (MIOpen): exactly seed 003's switches" sh -c "test \"\$(grep -v '^#' '$TMP/miopen_env.sh' | sort | tr '\n' ' ')\" = \"export MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2='0' export MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53='0' export MIOPEN_DEBUG_CONV_GEMM='0' \""
check "env (MIOpen): the GEMM family switch says what else it disables" grep -q "GemmBwdRest has no switch of its own: MIOPEN_DEBUG_CONV_GEMM disables .*also GemmBwd1x1_stride1" "$TMP/miopen_env.sh"
check "env (MIOpen): names the trials" grep -q "^#   ConvOclBwdWrW53 wrong: --dir=BWD_W" "$TMP/miopen_env.sh"
check "env (MIOpen): a verified alternative for the hanging problem" grep -q "MIOPEN_DEBUG_FIND_ONLY_SOLVER=Conv" "$TMP/miopen_env.sh"
check "env (MIOpen): fish syntax" sh -c "\"$CG\" env --db '$TMP/miopen.db' --device gfx1010 --shell fish | grep -qx \"set -gx MIOPEN_DEBUG_CONV_GEMM '0'\""

# --csv: a header and one parseable row per trial, nothing else on stdout.
"$CG" probe --db "$TMP/csv.db" --problem "$P" --solvers 'cpu:direct,cpu:depthwise' --csv >"$TMP/out.csv" 2>/dev/null
check "--csv: header + 2 rows, parseable" python3 -c "
import csv,sys
rows=list(csv.DictReader(open('$TMP/out.csv')))
sys.exit(0 if len(rows)==2 and {r['status'] for r in rows}=={'ok','unsupported'} else 1)"

# Bad input.
"$CG" probe --db "$DB" --solvers 'nothing*' --problem "$P" >/dev/null 2>"$TMP/err"; rc=$?
check "no solver left: exit 2 naming the flag" sh -c "test $rc -eq 2 && grep -q -- '--solvers' '$TMP/err'"
"$CG" probe --db "$DB" --directions sideways --problem "$P" >/dev/null 2>"$TMP/err"; rc=$?
check "bad --directions: exit 2" sh -c "test $rc -eq 2 && grep -q -- '--directions' '$TMP/err'"
"$CG" probe --db "$DB" --plugin /nonexistent.so --problem "$P" >/dev/null 2>"$TMP/err"; rc=$?
check "missing plugin: exit 2 naming it" sh -c "test $rc -eq 2 && grep -q 'nonexistent.so' '$TMP/err'"

# Memory: a problem whose tensors exceed the limit is recorded oom before anything is allocated
# (never a crash blamed on the solver), and the next problem in the same sweep runs normally.
DB3=$TMP/m.db
"$CG" probe --db "$DB3" --solvers cpu:direct --memory-limit 4M \
  --problem 'mb64ic64ih64oc64oh64kh3ph1' --problem 'mb1ic4ih8oc4oh8kh3ph1' >"$TMP/mem.log" 2>&1; rc=$?
mem_status() { "$CG" db show --db "$DB3" --json | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l)
    if '$1' in r['problem']: print(r['status'], r['reason'][:60]); break"; }
check "over the memory limit: oom naming the limit (rc $rc)" sh -c "'$CG' db show --db '$DB3' --json | grep 'mb64' | grep '\"status\":\"oom\"' | grep -q 'the limit is'"
check "the next problem still runs: ok ($(mem_status mb1ic4))" sh -c "test \"\$('$CG' db show --db '$DB3' --json | grep -c '\"status\":\"ok\"')\" -eq 1"
"$CG" probe --db "$DB3" --memory-limit 12Q --problem "$P" >/dev/null 2>"$TMP/err"; rc=$?
check "bad --memory-limit: exit 2 naming it" sh -c "test $rc -eq 2 && grep -q -- '--memory-limit' '$TMP/err'"

# A healthy solver that misses its first (derived) deadline, as on a loaded machine, is not a hang:
# the probe confirms a hang with a second try under 4x the deadline before recording it.
DB4=$TMP/h.db
CONVGUARD_CHAOS_STALL_ONCE=$TMP/stall.marker "$CG" probe --db "$DB4" --plugin "$CHAOS" \
  --solvers chaos:slow --problem "$P" >"$TMP/stall.log" 2>&1
check "stalled first try, then answered: ok, not hang" sh -c "'$CG' db show --db '$DB4' --json | grep '\"status\":\"ok\"' | grep -q 'answered on a second try'"

echo "probe tests: $failures failure(s)"
[ "$failures" -eq 0 ]
