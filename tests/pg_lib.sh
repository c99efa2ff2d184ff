# Sourced by tests that need a PostgreSQL server (postgres_test.sh, slurm_test.sh): pg_init makes a
# server of the test's own under $TMP/pgdata (Debian's postgresql; owned by `nobody` when the test
# runs as root, which PostgreSQL refuses), with password authentication for the role cgtest;
# pg_start runs it on 127.0.0.1:$PG_PORT only (fsync off unless PG_FSYNC=on), without a Unix socket, under a time limit so that it
# stops by itself if the test dies; pg_stop is a fast shutdown (sessions end, the data stays).
# Sets PG_PORT, PG_SECRET (the role's password, exported as PGPASSWORD: libpq's own variable) and
# pg_server_pid. pg_init returns non-zero, having said why, where no server can run.
pg_server_pid=
pg_as_server() {
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}
pg_init() {
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ] || ! command -v psql >/dev/null; then
    echo "no PostgreSQL server (scripts/install-deps.sh test installs postgresql)"
    return 1
  fi
  chmod 755 "$TMP"
  PG_PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  PG_SECRET="cg-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
  mkdir -p "$TMP/pgdata" "$TMP/pglog"
  echo "$PG_SECRET" >"$TMP/pwfile"
  [ "$(id -u)" -eq 0 ] && chown nobody:nogroup "$TMP/pgdata" "$TMP/pwfile" "$TMP/pglog"
  if ! pg_as_server "$PGBIN/initdb" -D "$TMP/pgdata" -U cgtest --pwfile="$TMP/pwfile" \
    --auth=scram-sha-256 -E UTF8 --locale=C >"$TMP/pglog/initdb.log" 2>&1; then
    rm -f "$TMP/pwfile"
    echo "initdb failed here:"; tail -n 5 "$TMP/pglog/initdb.log"
    return 1
  fi
  rm -f "$TMP/pwfile"
  export PGPASSWORD=$PG_SECRET
}
pg_start() {
  pg_as_server timeout 900 "$PGBIN/postgres" -D "$TMP/pgdata" -c listen_addresses=127.0.0.1 \
    -p "$PG_PORT" -k '' -c fsync="${PG_FSYNC:-off}" -c max_connections=40 >>"$TMP/pglog/server.log" 2>&1 &
  pg_server_pid=$!
  for _ in $(seq 100); do
    pg_sql postgres 'SELECT 1' >/dev/null 2>&1 && return 0
    kill -0 "$pg_server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "the PostgreSQL server did not start on 127.0.0.1:$PG_PORT:"; tail -n 5 "$TMP/pglog/server.log"
  return 1
}
pg_stop() {
  [ -n "$pg_server_pid" ] || return 0
  # pg_ctl signals the postmaster itself (SIGINT reaches no job that bash started in the
  # background: it ignores SIGINT there); -w: until it is down.
  pg_as_server "$PGBIN/pg_ctl" -D "$TMP/pgdata" stop -m fast -w -t 20 >>"$TMP/pglog/server.log" 2>&1 ||
    pkill -9 -f "$TMP/pgdata" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$pg_server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pg_server_pid" 2>/dev/null
  pg_server_pid=
}
pg_sql() {  # pg_sql DATABASE STATEMENT: its result rows, unaligned
  psql -h 127.0.0.1 -p "$PG_PORT" -U cgtest -d "$1" -Atc "$2"
}
pg_url() {  # pg_url DATABASE
  echo "postgresql://cgtest@127.0.0.1:$PG_PORT/$1"
}
