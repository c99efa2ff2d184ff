#!/usr/bin/env bash
# The sandbox against solvers that attack it (plugins/chaos/hostile.cpp): a forged reply on stdout
# is never taken as the verdict, children cannot hold a crashed worker's trial open or outlive the
# probe, a huge allocation is oom, bytes that are not UTF-8 are kept (replaced) not fatal, a closed
# stderr does not spin the prober, and each leaves no process, no running row and a sound database.
# Usage: hostile_test.sh path/to/convguard path/to/convguard_hostile.so
set -u
CG=$1
HOSTILE=$2
TMP=$(mktemp -d)
PIDS=$TMP/pids
mkdir -p "$PIDS"
cleanup() {
  for f in "$PIDS"/*; do [ -e "$f" ] && kill -9 "$(basename "$f")" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
export CONVGUARD_HOSTILE_PID_DIR=$PIDS
DB=$TMP/h.db
P='mb1ic3ih8oc4kh3ph1'
source "$(dirname "$0")/check_lib.sh"
field() {  # field SOLVER KEY: that field of its trial, on one line
  "$CG" db show --db "$DB" --json | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l)
    if r['solver']=='$1': print(str(r['$2']).replace(chr(10), ' ')); break"
}
alive_helpers() {  # pids recorded by helpers that still exist (zombies count as gone)
  local n=0
  for f in "$PIDS"/*; do
    [ -e "$f" ] || continue
    st=$(ps -o stat= -p "$(basename "$f")" 2>/dev/null)
    [ -n "$st" ] && [ "${st#Z}" = "$st" ] && n=$((n + 1))
  done
  echo $n
}

# A forged reply, then a hang; the healthy trial after it must be judged on its own.
start=$(date +%s.%N)
timeout 120 "$CG" probe --db "$DB" --plugin "$HOSTILE" --solvers 'hostile:json_then_hang,cpu:direct' \
  --problem "$P" --timeout 3 >"$TMP/p1.log" 2>&1
rc=$?
check "probe ends (rc $rc)" test "$rc" -ne 124
check "forged stdout reply: hang, not ok ($(field hostile:json_then_hang reason | cut -c1-60))" \
  test "$(field hostile:json_then_hang status)" = hang
check "the forged JSON is kept as output, not read as a reply" \
  test -n "$(field hostile:json_then_hang stderr_tail | grep 'first_run')"
check "the next healthy trial is ok" test "$(field cpu:direct status)" = ok

# Plain text on stdout is output, not a protocol error.
"$CG" probe --db "$DB" --plugin "$HOSTILE" --solvers 'hostile:stdout_text' --problem "$P" >/dev/null 2>&1
check "stdout chatter: ok" test "$(field hostile:stdout_text status)" = ok
check "stdout chatter: kept in the output tail" test -n "$(field hostile:stdout_text stderr_tail | grep 'chatter on stdout')"

# A helper holds every descriptor while the worker segfaults: crash, at once, helper gone.
start=$(date +%s.%N)
"$CG" probe --db "$DB" --plugin "$HOSTILE" --solvers 'hostile:fork_then_segfault' --problem "$P" \
  --timeout 30 >/dev/null 2>&1
took=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
check "fork then segfault: crash, signal 11 ($(field hostile:fork_then_segfault reason))" \
  sh -c "'$CG' db show --db '$DB' --json | grep fork_then_segfault | grep '\"status\":\"crash\"' | grep -q '\"signal\":11'"
check "fork then segfault: seen by pid, not after the 30 s deadline (took ${took}s)" \
  python3 -c "import sys; sys.exit(0 if $took < 15 else 1)"
check "fork then segfault: the helper is gone" test "$(alive_helpers)" -eq 0

# A helper in its own session would outlive the probe: it is ended with its worker.
rm -f "$PIDS"/*
"$CG" probe --db "$DB" --plugin "$HOSTILE" --solvers 'hostile:setsid_orphan' --problem "$P" >/dev/null 2>&1
sleep 0.3
check "setsid helper: the trial is ok" test "$(field hostile:setsid_orphan status)" = ok
check "setsid helper: started ($(ls "$PIDS" | wc -l)) and gone after the probe" \
  sh -c "test \$(ls '$PIDS' | wc -l) -ge 1 && test $(alive_helpers) -eq 0"
# How: the helper is double-forked (fork, setsid, fork, the middle one exits), so it is in no
# process group of the worker's and its parent is gone; as the prober is a child subreaper it is
# reparented to the prober (not to init), which ends it when the worker ends. Seen while the
# worker still runs (hostile:close_stderr sleeps 3 s after the setsid trial).
rm -f "$PIDS"/*
"$CG" probe --db "$TMP/s.db" --plugin "$HOSTILE" --solvers 'hostile:setsid_orphan,hostile:close_stderr' \
  --problem "$P" >/dev/null 2>&1 &
prober=$!
prober_sid=$(ps -o sid= -p $prober | tr -d ' ')
seen=""
for _ in $(seq 100); do
  for f in "$PIDS"/*; do
    [ -e "$f" ] || continue
    read -r ppid sid <<<"$(ps -o ppid=,sid= -p "$(basename "$f")" 2>/dev/null)"
    # Its own session (not the prober's, which the worker shares), its parent the prober.
    [ "${ppid:-}" = "$prober" ] && [ "${sid:-$prober_sid}" != "$prober_sid" ] && seen="ppid $ppid, sid $sid"
  done
  [ -n "$seen" ] && break
  sleep 0.05
done
check "setsid helper: a double-forked orphan in its own session, reparented to the prober ($seen)" \
  test -n "$seen"
wait $prober
check "setsid helper: ended with its worker (none of $(ls "$PIDS" | wc -l) alive)" test "$(alive_helpers)" -eq 0

# 4 TiB from operator new: oom, not crash.
"$CG" probe --db "$DB" --plugin "$HOSTILE" --solvers 'hostile:huge_alloc' --problem "$P" >/dev/null 2>&1
check "huge allocation: oom ($(field hostile:huge_alloc reason | cut -c1-80))" \
  test "$(field hostile:huge_alloc status)" = oom

# 0xFF in stderr and in the error message: recorded (error), exported, shown.
"$CG" probe --db "$DB" --plugin "$HOSTILE" --solvers 'hostile:stderr_ff' --problem "$P" >/dev/null 2>&1
check "not UTF-8: error, with its message" sh -c "'$CG' db show --db '$DB' --json | grep stderr_ff | grep '\"status\":\"error\"' | grep -q 'hostile error'"
"$CG" db export --db "$DB" >"$TMP/export.jsonl" 2>"$TMP/export.err"; rc=$?
check "db export of it works (rc $rc, $(wc -l <"$TMP/export.jsonl") lines)" \
  sh -c "test $rc -eq 0 && test \$(wc -l <'$TMP/export.jsonl') -eq \$('$CG' db show --db '$DB' --json | wc -l)"

# Closed stderr: the prober waits without spinning (it once burned 3.2 s of CPU over a 3 s trial).
cpu=$(python3 - "$CG" "$DB" "$HOSTILE" "$P" <<'PY'
import resource, subprocess, sys
cg, db, plugin, p = sys.argv[1:]
subprocess.run([cg, 'probe', '--db', db, '--plugin', plugin, '--solvers', 'hostile:close_stderr',
                '--problem', p], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(round(r.ru_utime + r.ru_stime, 2))
PY
)
check "closed stderr: ok" test "$(field hostile:close_stderr status)" = ok
check "closed stderr: the probe used ${cpu} s of CPU over a 3 s sleep (no spin: < 2.5 s)" \
  python3 -c "import sys; sys.exit(0 if $cpu < 2.5 else 1)"

# Afterwards: no running row, no helper left, the database is sound.
check "no trial left running" sh -c "! '$CG' db show --db '$DB' --json | grep -q '\"status\":\"running\"'"
check "no helper process left" test "$(alive_helpers)" -eq 0
check "database integrity ok" sh -c "'$CG' db check --db '$DB' | grep -q ok"
finish
