#!/usr/bin/env bash
# One shared PostgreSQL store (issue 20): a PostgreSQL server of its own (Debian's postgresql, on
# 127.0.0.1 only, password authentication, stopped by a time limit if this script dies) takes
# `--db postgresql://...` from probe, env, report, db and the driver's -S auto. Checked:
# - a URL carrying a password is refused (credentials come from libpq: PGPASSWORD here), and the
#   password appears in no output, row or reproduce command;
# - the rows equal a SQLite run's; db export/import carry them both ways;
# - a prober killed with SIGKILL mid-trial leaves its row running, held by a session that is gone:
#   `db check` says so, and the next probe reclaims it (interrupted), retries it and records it;
# - 8 probers of one sweep at once share its trials (claims), one of them killed with SIGKILL and
#   the server restarted mid-sweep: every prober reconnects or stops with a clear error, none
#   hangs, and after a resubmitted prober the rows equal the SQLite run's, none running, none twice;
# - a server that is gone for good ends a probe within the reconnect window with a clear error.
# Usage: postgres_test.sh convguard convguard_chaos.so. Exit 77 (skipped, said why) without
# PostgreSQL.
set -u
CG=$(readlink -f "$1")
CHAOS=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/check_lib.sh"
source "$HERE/pg_lib.sh"
TMP=$(mktemp -d)
cleanup() {
  pg_stop
  wait 2>/dev/null
  [ -n "${KEEP_TMP:-}" ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
if ! pg_init >"$TMP/pg_why" || ! pg_start >"$TMP/pg_why"; then
  echo "SKIP: $(cat "$TMP/pg_why")"
  exit 77
fi
sql() { pg_sql "${DB:-postgres}" "$1"; }
# A dead prober's rows are reclaimable once its lease (renewed by its heartbeat) has run out: 2 s
# here (20 by default), so that the next probe below can take them.
export CONVGUARD_DB_LEASE_S=2
for d in cg cg2 cg3 cg4; do sql "CREATE DATABASE $d" >/dev/null; done
URL=$(pg_url cg)
SECRET=$PG_SECRET
PORT=$PG_PORT
check "the server listens on 127.0.0.1 only" \
  test "$(DB=cg sql "SELECT setting FROM pg_settings WHERE name = 'listen_addresses'")" = 127.0.0.1

# A password in the URL is refused before anything connects, naming --db and where it belongs.
"$CG" env --db "postgresql://cgtest:$SECRET@127.0.0.1:$PORT/cg" >"$TMP/pw.out" 2>&1
rc=$?
check "a URL with a password: exit 2, says to use libpq's files ($(head -c 200 "$TMP/pw.out"))" \
  bash -c "test $rc -eq 2 && grep -q -- '--db' '$TMP/pw.out' && grep -q PGPASSWORD '$TMP/pw.out'"

cat >"$TMP/suite.txt" <<'EOF'
mb1ic3ih8oc4kh3ph1_n"tiny"
mb1ic3ih16oc8kh3ph1_n"small"
mb2ic4ih12oc4kh1_n"pointwise"
mb1ic8ih24oc8kh3ph1_n"medium"
EOF
# chaos:slow_2s keeps the 8 probers below busy while the server restarts (2 s a run).
SOLVERS='cpu:direct,cpu:im2col_gemm,chaos:good,chaos:segfault,chaos:wrong,chaos:error,chaos:slow,chaos:slow_2s'
FLAGS=(--plugin "$CHAOS" --suite "$TMP/suite.txt" --directions fwd,bwd_data --timing 0
       --timeout 5 --workarounds off --solvers "$SOLVERS")
probe() {  # probe DB LOG [flags...]
  local db=$1 log=$2
  shift 2
  timeout 300 "$CG" probe "${FLAGS[@]}" --db "$db" "$@" >"$TMP/$log.out" 2>&1
  echo $? >"$TMP/$log.rc"
}
pg_rows() { db_rows "$CG" "$1"; }

probe "$TMP/ref.db" ref
check "SQLite reference run: exit 0" test "$(cat "$TMP/ref.rc")" -eq 0
pg_rows "$TMP/ref.db" >"$TMP/ref.rows"
probe "$URL" pg1
check "probe --db postgresql://: exit 0 ($(tail -n 1 "$TMP/pg1.out"))" test "$(cat "$TMP/pg1.rc")" -eq 0
pg_rows "$URL" >"$TMP/pg1.rows"
check "its rows equal the SQLite run's ($(wc -l <"$TMP/ref.rows") rows)" diff "$TMP/ref.rows" "$TMP/pg1.rows"
check "the planted statuses are there" \
  bash -c "grep -q '| crash' '$TMP/pg1.rows' && grep -q '| wrong' '$TMP/pg1.rows' && grep -q '| ok' '$TMP/pg1.rows'"
"$CG" env --db "$URL" >"$TMP/env.out" 2>&1
check "env --db postgresql:// reads the evidence" \
  bash -c "test $? -eq 0 && grep -q 'chaos:segfault' '$TMP/env.out'"
"$CG" report --db "$URL" --device all --html "$TMP/report.html" >"$TMP/report.out" 2>&1
check "report --db postgresql:// writes its page" test -s "$TMP/report.html"
CONVGUARD_PLUGINS=$CHAOS "$CG" driver --problem 'mb1ic3ih8oc4kh3ph1' -S auto --db "$URL" \
  >"$TMP/auto.out" 2>&1
rc=$?
check "driver -S auto --db postgresql:// selects from its evidence (exit $rc: $(grep -m1 -o 'fastest verified[^;]*' "$TMP/auto.out"))" \
  bash -c "test $rc -eq 0 && grep -q 'fastest verified' '$TMP/auto.out'"
"$CG" db export --db "$URL" >"$TMP/pg.jsonl"
"$CG" db import --db "$TMP/from_pg.db" "$TMP/pg.jsonl" >/dev/null 2>&1
check "db export from PostgreSQL, import into SQLite: the same rows" \
  diff "$TMP/ref.rows" <(pg_rows "$TMP/from_pg.db")
"$CG" db export --db "$TMP/ref.db" >"$TMP/ref.jsonl"
"$CG" db import --db "postgresql://cgtest@127.0.0.1:$PORT/cg2" "$TMP/ref.jsonl" >/dev/null 2>&1
check "db export from SQLite, import into PostgreSQL: the same rows" \
  diff "$TMP/ref.rows" <(pg_rows "postgresql://cgtest@127.0.0.1:$PORT/cg2")
check "the password is in no output, export or stored command" \
  bash -c "! grep -rqF '$SECRET' '$TMP'/*.out '$TMP'/*.jsonl '$TMP'/*.html"

# A prober killed with SIGKILL mid-trial (chaos:slow takes 300 ms a run).
URL3="postgresql://cgtest@127.0.0.1:$PORT/cg3"
"$CG" probe "${FLAGS[@]}" --db "$URL3" --solvers chaos:slow --timeout 30 >"$TMP/killed.out" 2>&1 &
victim=$!
running=0
for _ in $(seq 100); do
  [ "$(DB=cg3 sql "SELECT count(*) FROM trials WHERE status = 'running'" 2>/dev/null)" = 1 ] && { running=1; break; }
  sleep 0.1
done
kill -9 "$victim"; wait "$victim" 2>/dev/null
holder=$(DB=cg3 sql "SELECT holder_pid FROM trials WHERE status = 'running'")
check "the killed prober's trial stays running, held by its pid (running seen: $running, holder: $holder)" \
  test "$running" -eq 1 -a "$holder" = "$victim"
sleep 2.5  # the dead prober's lease runs out
"$CG" db check --db "$URL3" >"$TMP/check.out" 2>&1
rc=$?
check "db check names the running trial whose prober is gone (exit $rc: $(cat "$TMP/check.out"))" \
  bash -c "test $rc -eq 1 && grep -q 'prober is gone' '$TMP/check.out'"
probe "$URL3" resumed --solvers chaos:slow --timeout 30
check "the next probe reclaims it (recovered 1) and finishes the sweep" \
  bash -c "test $(cat "$TMP/resumed.rc") -eq 0 && grep -q 'recovered 1 trial' '$TMP/resumed.out'"
check "chaos:slow: ok (or unsupported: backward) on every problem, none running" \
  test -z "$(pg_rows "$URL3" | grep -v -E '[|] (ok|unsupported)$')"

# 8 probers at once on one sweep, into a fresh database: one killed, the server restarted.
DB=postgres sql "DROP DATABASE cg" >/dev/null && DB=postgres sql "CREATE DATABASE cg" >/dev/null
pids=()
for i in $(seq 8); do
  CONVGUARD_DB_RECONNECT_S=30 timeout 300 "$CG" probe "${FLAGS[@]}" --db "$URL" >"$TMP/p$i.out" 2>&1 &
  pids+=($!)
done
sleep 1.5
pkill -9 -P "${pids[2]}"  # the prober under timeout
busy=$(pg_sql cg "SELECT count(*) FROM trials WHERE status = 'running'")
terminated_before=$(grep -c 'terminating connection due to administrator command' "$TMP/pglog/server.log")
pg_stop
terminated=$(( $(grep -c 'terminating connection due to administrator command' "$TMP/pglog/server.log") - terminated_before ))
sleep 1
pg_start >"$TMP/restart.out"
rc=$?
check "the server restarted mid-sweep ($(cat "$TMP/restart.out"))" test $rc -eq 0
clear_error=1
for i in $(seq 8); do
  wait "${pids[$((i - 1))]}"
  rc=$?
  echo $rc >"$TMP/p$i.rc"
  [ "$i" -eq 3 ] && continue
  # Exit 0, or a clear error that names the database (never 124: timeout's hang).
  if [ $rc -ne 0 ] && ! grep -q "^convguard probe: .*$URL: " "$TMP/p$i.out"; then clear_error=0; fi
  [ $rc -eq 124 ] && clear_error=0
done
check "the other 7 probers reconnected or stopped with a clear error, none hung (exits: $(cat "$TMP"/p[1245678].rc | tr '\n' ' '))" \
  test $clear_error -eq 1
check "the restart cut off live sessions ($terminated) while trials ran ($busy running)" \
  test "$terminated" -gt 0 -a "$busy" -gt 0
check "some prober reconnected and finished (exit 0)" grep -qx 0 "$TMP"/p[1245678].rc
shared=$(cat "$TMP"/p*.out | grep -o '[0-9]* held by another prober' | awk '{s += $1} END {print s + 0}')
check "the probers shared the sweep's trials ($shared declined as held by another)" test "$shared" -gt 0
sleep 2.5  # the killed prober's lease runs out
probe "$URL" resubmitted
check "a resubmitted prober finishes the sweep (exit 0)" test "$(cat "$TMP/resubmitted.rc")" -eq 0
pg_rows "$URL" >"$TMP/pg8.rows"
check "after it, the rows equal the SQLite run's" diff "$TMP/ref.rows" "$TMP/pg8.rows"
running=$(DB=cg sql "SELECT count(*) FROM trials WHERE status = 'running'")
check "none running ($running), none recorded twice" \
  bash -c "test '$running' = 0 && test -z \"\$(cut -d'|' -f1,2 '$TMP/pg8.rows' | uniq -d)\""

# A live prober whose connections are cut (pg_terminate_backend: a network blip) keeps its
# trial: its lease, renewed by its heartbeat, says it is alive, so a prober that starts meanwhile
# neither reclaims nor takes it; the first prober reconnects and records it.
pg_sql postgres "CREATE DATABASE cg5" >/dev/null
URL5=$(pg_url cg5)
CONVGUARD_DB_LEASE_S=10 "$CG" probe "${FLAGS[@]}" --db "$URL5" --solvers chaos:slow_2s \
  --directions fwd >"$TMP/holder.out" 2>&1 &
holder=$!
token=
for _ in $(seq 100); do
  token=$(DB=cg5 sql "SELECT holder_session FROM trials WHERE status = 'running'" 2>/dev/null)
  [ -n "$token" ] && break
  sleep 0.1
done
cut=$(DB=cg5 sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'convguard $token'")
CONVGUARD_DB_LEASE_S=10 timeout 120 "$CG" probe "${FLAGS[@]}" --db "$URL5" --solvers chaos:slow_2s \
  --directions fwd >"$TMP/second.out" 2>&1
rc2=$?
wait "$holder"
rc1=$?
check "its connections cut ($cut), the holder reconnected and finished (exit $rc1)" \
  test -n "$token" -a "$cut" -ge 1 -a "$rc1" -eq 0
check "the prober that started meanwhile reclaimed nothing and left the live trial alone (exit $rc2)" \
  bash -c "test $rc2 -eq 0 && ! grep -q 'recovered' '$TMP/second.out' && grep -q 'held by another prober' '$TMP/second.out'"
check "every trial ok, none interrupted" \
  test -z "$(pg_rows "$URL5" | grep -v '| ok$')"

# A server gone for good: a probe that loses it mid-sweep stops within the reconnect window with
# an error naming the store, and connecting afterwards fails at once.
CONVGUARD_DB_RECONNECT_S=3 timeout 120 "$CG" probe "${FLAGS[@]}" --db "$(pg_url cg4)" \
  --solvers chaos:slow_2s >"$TMP/lost.out" 2>&1 &
lost=$!
sleep 1
pg_stop
SECONDS=0
wait "$lost"
rc=$?
check "a probe whose server is gone for good stops in $SECONDS s (exit $rc: $(grep -m1 -o 'could not reconnect[^:]*' "$TMP/lost.out"))" \
  bash -c "test $rc -ne 0 && test $rc -ne 124 && grep -q 'cg4' '$TMP/lost.out' && grep -q 'could not reconnect' '$TMP/lost.out'"
timeout 60 "$CG" env --db "$URL" >"$TMP/down.out" 2>&1
rc=$?
check "env with the server down: a clear error, not a hang (exit $rc: $(head -c 160 "$TMP/down.out"))" \
  bash -c "test $rc -ne 0 && test $rc -ne 124 && grep -q 'cannot connect' '$TMP/down.out'"
finish
