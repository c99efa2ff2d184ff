#!/usr/bin/env bash
# The results store's write rate for docs/cluster.md: trials journaled per second (begin + finish,
# no trial run) into SQLite by one writer and into PostgreSQL by 1 and 8 writers, and the same
# through the whole probe (the sandbox included: cpu:direct on 1x1 problems) into each store. A
# PostgreSQL server of its own on 127.0.0.1 (tests/pg_lib.sh), with fsync on, as a lab's would be.
# Writes DIR/store_bench.log (default docs/perf/<date>-<commit>/).
#   bash bench/store_bench.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bin=$ROOT/build/release
dir=${1:-docs/perf/$(date -u +%F)-$(git rev-parse --short HEAD)}
mkdir -p "$dir"
TMP=$(mktemp -d)
source tests/pg_lib.sh
trap 'pg_stop; rm -rf "$TMP"' EXIT
pg_init >/dev/null
PG_FSYNC=on pg_start >/dev/null
for d in b1 b8 p1 p8; do pg_sql postgres "CREATE DATABASE $d" >/dev/null; done
# 200 1x1 problems for the probe runs.
python3 -c "
for i in range(200): print(f'mb1ic1ih{4 + i // 29}iw{5 + i % 29}oc1kh1kw1')" >"$TMP/tiny.txt"
{
  echo "date: $(date -u +%FT%TZ) commit: $(git rev-parse --short HEAD)"
  lscpu | grep -E '^(Model name|CPU\(s\))'
  echo "PostgreSQL: $("$PGBIN/postgres" --version), fsync on, 127.0.0.1"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  for rep in 1 2; do
    echo "# round $rep"
    "$bin/bench/store_bench" --db "$TMP/s$rep.db" --trials 2000
    "$bin/bench/store_bench" --db "$(pg_url b1)" --trials 2000
    pg_sql b1 "DELETE FROM trials" >/dev/null
    "$bin/bench/store_bench" --db "$(pg_url b8)" --writers 8 --trials 500
    pg_sql b8 "DELETE FROM trials" >/dev/null
  done
  for store in "$TMP/probe.db" "$(pg_url p1)"; do
    t0=$(date +%s%N)
    "$bin/convguard" probe --db "$store" --suite "$TMP/tiny.txt" --solvers cpu:direct 2>&1 | tail -n 1
    echo "probe into ${store##*/}: 200 trials, wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  done
  t0=$(date +%s%N)
  probers=()
  for i in $(seq 8); do
    "$bin/convguard" probe --db "$(pg_url p8)" --suite "$TMP/tiny.txt" --solvers cpu:direct >"$TMP/p$i.out" 2>&1 &
    probers+=($!)
  done
  wait "${probers[@]}"  # not the server
  echo "8 probers of one sweep into postgresql p8: 200 trials, wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  grep -h 'probe finished' "$TMP"/p*.out
} >"$dir/store_bench.log" 2>&1
cat "$dir/store_bench.log"
