#!/usr/bin/env bash
# The prober killed (kill -9) at 20 random points and stopped by Ctrl-C (SIGINT to its process
# group, as a terminal sends it) at 20 more, during a sweep of short trials: after each, every
# result recorded before is still there with the same status, every trial the probe reported is
# recorded, integrity_check is ok, at most the one trial in flight is left running (none after
# Ctrl-C) and no worker is left; the rerun that follows resumes, and a final rerun completes the
# sweep with every solver's planted status (no healthy solver recorded bad).
# The points are drawn from a seed, printed; CONVGUARD_FAULT_SEED=N replays them.
# Usage: faults_test.sh path/to/convguard path/to/convguard_chaos.so
set -u
CG=$(realpath "$1")
CHAOS=$(realpath "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
source "$HERE/check_lib.sh"
state() { python3 "$HERE/db_state.py" "$CG" "$@"; }

SEED=${CONVGUARD_FAULT_SEED:-$(date +%s)}
RANDOM=$SEED
echo "seed $SEED (replay the same kill points: CONVGUARD_FAULT_SEED=$SEED)"

# 6 problems x 3 solvers: chaos:slow sleeps 0.3 s a run (--timing 0: one run a trial), so a
# sweep takes ~2.5 s and the points (0.05 to 0.8 s after the start) fall in the start-up, the
# recovery of the last run's trial, trials and the writes between them.
SOLVERS='chaos:slow,chaos:good,chaos:wrong'
PLANTED='chaos:slow=ok,chaos:good=ok,chaos:wrong=wrong'
PROBLEMS=()
for i in 6 7 8 9 10 11; do PROBLEMS+=(--problem "mb1ic3ih${i}oc4kh3ph1"); done
# A new session and process group with SIGINT at its default (a script's background jobs ignore
# it), as a command typed at a terminal: the signal reaches the group, the workers have their own.
# Run as `launch ... &`: exec, so that $! is the prober itself.
launch() {
  exec python3 -c 'import os, signal, sys
os.setsid(); signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
# started PID: waits (up to 10 s) until PID, started by `launch`, is the prober itself. The delay
# before a signal counts from there: under load python's start-up took longer than the shortest
# delays, and a Ctrl-C sent to a process group that setsid had not made yet reached nobody, so
# the sweep ran to its end and 21 of CI's 40 INT rounds counted no signal.
started() {
  for _ in $(seq 200); do
    [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$CG" ] || ! alive "$1" && return 0
    sleep 0.05
  done
}
alive() {  # alive PID...: one of them has not exited (a zombie until it is reaped has)
  ps -o stat= -p "$(echo "$@" | tr ' ' ,)" | grep -qv Z
}
gone() {  # gone PID...: each has exited, waiting up to 10 s
  for _ in $(seq 100); do
    [ $# -eq 0 ] || ! alive "$@" && return 0
    sleep 0.1
  done
  return 1
}

# run_faults KIND: KIND is KILL (kill -9 of the prober) or INT (Ctrl-C), until 20 signals have
# reached a running prober (at most 60 rounds). A sweep that finishes before its signal is
# checked (every planted status) and does not count; the next round starts a new database.
run_faults() {
  local kind=$1 sig=-9 target rc_want=137 running_max=1 cycle=1 round pid rc delay workers why
  local bad=0 stopped=0 cut=0 finished=0 db
  [ "$kind" = INT ] && sig=-INT rc_want=130 running_max=0
  db=$TMP/$kind-1.db
  echo '[]' >"$TMP/before.json"
  : >"$TMP/in_flight"
  for round in $(seq 60); do
    [ "$stopped" -ge 20 ] && break
    delay=$(python3 -c "print(($RANDOM % 750 + 50) / 1000)")
    launch "$CG" probe --db "$db" --plugin "$CHAOS" --solvers "$SOLVERS" "${PROBLEMS[@]}" \
      --timing 0 --json >"$TMP/run.jsonl" 2>"$TMP/run.err" &
    pid=$!
    started $pid
    # The trial the last kill -9 cut off runs first: killing the prober inside it again would
    # make it count against its solver, as designed (a trial that takes its prober down twice;
    # probe_test.sh tests that), so this kill comes after that trial has finished.
    if [ -s "$TMP/in_flight" ]; then
      for _ in $(seq 200); do
        grep -qFf "$TMP/in_flight" "$TMP/run.jsonl" || ! kill -0 $pid 2>/dev/null && break
        sleep 0.05
      done
    fi
    sleep "$delay"
    workers=$(pgrep -P $pid)
    # Ctrl-C goes to the process group, as a terminal sends it.
    target=$pid
    [ "$kind" = INT ] && target=-$pid
    kill $sig -- $target 2>/dev/null
    wait $pid 2>/dev/null
    rc=$?
    why=""
    [ "$rc" -eq "$rc_want" ] || [ "$rc" -eq 0 ] || why="exit $rc"
    gone $workers || why="$why; a worker outlived it"
    state "$db" --before "$TMP/before.json" --reported "$TMP/run.jsonl" --running-max "$running_max" \
      --save "$TMP/before.json" --running-to "$TMP/in_flight" >"$TMP/state.txt" || why="$why; see above"
    [ "$rc" -ne 0 ] && stopped=$((stopped + 1))
    [ -s "$TMP/in_flight" ] || grep -q '"status":"interrupted"' "$TMP/run.jsonl" && cut=$((cut + 1))
    echo "  $kind $round: after ${delay} s, exit $rc, $(tail -1 "$TMP/state.txt" | sed 's/^ *//')"
    if [ "$rc" -eq 0 ]; then
      finished=$((finished + 1))
      state "$db" --final "$PLANTED" >>"$TMP/state.txt" || why="$why; not every planted status"
      cycle=$((cycle + 1))
      db=$TMP/$kind-$cycle.db
      echo '[]' >"$TMP/before.json"
    fi
    if [ -n "$why" ]; then
      grep -v "rows, .* running" "$TMP/state.txt"
      echo "    FAILED: $why"
      bad=$((bad + 1))
    fi
  done
  local what="nothing lost, reported trials recorded, integrity ok, no worker left"
  check "$kind at $stopped random points ($cut inside a trial; $finished sweeps finished first): $what" \
    test "$bad" -eq 0 -a "$stopped" -ge 20
  # The last database's sweep was stopped: the same command completes it.
  if [ -e "$db" ]; then
    "$CG" probe --db "$db" --plugin "$CHAOS" --solvers "$SOLVERS" "${PROBLEMS[@]}" --timing 0 \
      >/dev/null 2>&1
    rc=$?
    check "$kind: the rerun completes the sweep (rc $rc), every row its planted status" \
      sh -c "test $rc -eq 0 && python3 '$HERE/db_state.py' '$CG' '$db' --before '$TMP/before.json' --final '$PLANTED'"
  fi
}

run_faults KILL
run_faults INT
finish
