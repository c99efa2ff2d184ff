#!/usr/bin/env bash
# Compile separated from run, against the simulated MIOpen (docs/miopen.md, "Compiling"): the
# plugin's compile step (*CompileSolution, plugin.h prepare()) has a deadline of its own
# (--compile-timeout), the trial's deadline (--timeout) starts after it, and the compiled kernel
# lands in a kernel cache that the device's next worker reuses. The simulation's first compile of
# a (solver, problem) sleeps FAKE_MIOPEN_COMPILE_MS and logs a line to FAKE_MIOPEN_COMPILE_LOG;
# one found in the cache folder (MIOPEN_CUSTOM_CACHE_DIR, which the plugin sets) does neither.
# No timed assertion: the recorded compile time is checked against the sleep as a lower bound.
# Usage: miopen_compile_test.sh path/to/convguard path/to/convguard_miopen.so path/to/libfake_miopen.so
set -u
CG=$(readlink -f "$1") PLUGIN=$(readlink -f "$2") FAKE=$(readlink -f "$3") TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP CONVGUARD_MIOPEN_PATH=$FAKE
export FAKE_MIOPEN_COMPILE_LOG=$TMP/compiles.log
source "$(dirname "$0")/check_lib.sh"
SOLVER=miopen:ConvDirectNaiveConvFwd

# probe NAME PROBLEM COMPILE_MS [FLAGS...]: one solver, one problem, into $TMP/NAME.jsonl.
probe() {
  local name=$1 problem=$2 ms=$3
  shift 3
  FAKE_MIOPEN_COMPILE_MS=$ms "$CG" probe --plugin "$PLUGIN" --device hip:0 --problem "$problem" \
    --solvers "$SOLVER" --db "$TMP/$name.db" --timing 0 --workarounds off "$@" >"$TMP/$name.log" 2>&1
  "$CG" db show --db "$TMP/$name.db" --json >"$TMP/$name.jsonl"
}
# field NAME KEY: the trial's KEY.
field() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])" "$TMP/$1.jsonl" "$2"; }
compiles() { grep -c "^compile ConvDirectNaiveConvFwd-" "$FAKE_MIOPEN_COMPILE_LOG"; }

# A first compile of 3 s against a run deadline of 1 s: recorded as compile time, the trial ok.
probe first mb1ic4ih8oc4kh3ph1 3000 --timeout 1 --compile-timeout 120
check "slow first compile: ok, not hang" test "$(field first status)" = ok
check "the compile time is recorded (at least the simulated 3000 ms)" \
  python3 -c "import sys; sys.exit(not float('$(field first compile_ms)') >= 3000)"
# (It ran under --timeout 1 after a compile of >= 3 s and is ok: the compile was not counted.)
check "both deadlines are recorded: the compile's 120 s, the run's from its 1 s" python3 -c \
  "import sys; sys.exit(not ($(field first compile_deadline_ms) == 120000 and $(field first deadline_ms) >= 1000))"
n1=$(compiles)
check "the worker compiled the trial's problem once (its start-up measurement another)" test "$n1" -eq 2

# The next worker on the device (another probe's): the kernel comes from the shared cache, so the
# simulation logs no compile.
probe again mb1ic4ih8oc4kh3ph1 3000 --timeout 1 --compile-timeout 120
check "next worker: ok" test "$(field again status)" = ok
check "next worker: the compiled kernel is reused (no compile logged)" test "$(compiles)" -eq "$n1"
check "the kernel cache is per user and device: one folder" \
  sh -c "test \$(ls -d '$TMP'/convguard-miopen-u$(id -u)/kernels-* | wc -l) -eq 1"

# A compile longer than --compile-timeout: compile_timeout, not hang, and not evidence against
# the solver (env recommends nothing).
probe slow mb1ic4ih10oc4kh3ph1 10000 --timeout 60 --compile-timeout 1
check "compile over its deadline: compile_timeout" test "$(field slow status)" = compile_timeout
check "compile_timeout names --compile-timeout" grep -q "compile-timeout" "$TMP/slow.jsonl"
"$CG" env --db "$TMP/slow.db" --device gfx1010 >"$TMP/env.sh" 2>&1
check "env: a compile timeout is no evidence against the solver" sh -c "! grep -q '^export' '$TMP/env.sh'"

# A database of schema 2 (before compile_timeout and the compile columns) is migrated on open,
# its rows kept; then a compile_timeout row can be stored in it.
python3 - "$TMP/v2.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (2);
CREATE TABLE devices (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, description TEXT NOT NULL, first_seen TEXT NOT NULL);
CREATE TABLE problems (id INTEGER PRIMARY KEY, canonical TEXT NOT NULL UNIQUE);
CREATE TABLE solvers (id TEXT PRIMARY KEY, backend TEXT NOT NULL, family TEXT NOT NULL);
CREATE TABLE trials (id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL REFERENCES devices(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id), solver_id TEXT NOT NULL REFERENCES solvers(id),
  status TEXT NOT NULL CHECK (status IN ('running','ok','wrong','hang','crash','error','oom','unsupported','skipped','interrupted')),
  reason TEXT NOT NULL DEFAULT '', first_ms REAL, median_ms REAL, min_ms REAL, runs INTEGER,
  workspace_bytes INTEGER, peak_rss_bytes INTEGER, rel_error REAL, max_abs_error REAL, tolerance REAL,
  signal INTEGER, exit_code INTEGER, stderr_tail TEXT NOT NULL DEFAULT '', deadline_ms REAL,
  started_at TEXT NOT NULL, finished_at TEXT, command TEXT NOT NULL, UNIQUE (device_id, problem_id, solver_id));
CREATE INDEX trials_status ON trials(status);
INSERT INTO devices VALUES (1, 'fp', 'desc', '2026-01-01T00:00:00Z');
INSERT INTO problems VALUES (1, 'g1mb1ic4ih8iw8oc4oh8ow8kh3kw3sh1sw1ph1pw1');
INSERT INTO solvers VALUES ('cpu:direct', 'cpu', 'direct');
INSERT INTO trials (device_id, problem_id, solver_id, status, started_at, finished_at, command)
  VALUES (1, 1, 'cpu:direct', 'hang', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', 'x');
""")
c.commit()
PY
check "schema 2 -> 3: the old row is kept" sh -c "\"$CG\" db show --db '$TMP/v2.db' | grep -q 'cpu:direct *hang'"
"$CG" db import --db "$TMP/v2.db" "$TMP/slow.jsonl" >/dev/null 2>&1
check "schema 3 stores compile_timeout" sh -c "\"$CG\" db show --db '$TMP/v2.db' | grep -q ' compile_timeout '"
check "schema 2 -> 4: version 4, with the running row's holder columns" \
  python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in c.execute('PRAGMA table_info(trials)')]
sys.exit(0 if c.execute('SELECT MAX(version) FROM schema_version').fetchone()[0] == 4 and
         cols[-4:] == ['holder_host', 'holder_pid', 'holder_session', 'holder_seen'] else 1)" "$TMP/v2.db"
# A database of schema 3 (before the holder columns) with a row left running: migrated to 4 on
# open, the row kept.
python3 - "$TMP/v3.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (3);
CREATE TABLE devices (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, description TEXT NOT NULL, first_seen TEXT NOT NULL);
CREATE TABLE problems (id INTEGER PRIMARY KEY, canonical TEXT NOT NULL UNIQUE);
CREATE TABLE solvers (id TEXT PRIMARY KEY, backend TEXT NOT NULL, family TEXT NOT NULL);
INSERT INTO problems VALUES (1, 'g1mb1ic4ih8iw8oc4oh8ow8kh3kw3sh1sw1ph1pw1');
INSERT INTO solvers VALUES ('cpu:direct', 'cpu', 'direct');
CREATE TABLE trials (id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL REFERENCES devices(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id), solver_id TEXT NOT NULL REFERENCES solvers(id),
  status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', first_ms REAL, median_ms REAL, min_ms REAL,
  runs INTEGER, workspace_bytes INTEGER, peak_rss_bytes INTEGER, rel_error REAL, max_abs_error REAL,
  tolerance REAL, signal INTEGER, exit_code INTEGER, stderr_tail TEXT NOT NULL DEFAULT '',
  deadline_ms REAL, started_at TEXT NOT NULL, finished_at TEXT, command TEXT NOT NULL,
  compile_ms REAL, compile_deadline_ms REAL, UNIQUE (device_id, problem_id, solver_id));
INSERT INTO devices VALUES (2, 'fp3', 'desc', '2026-01-01T00:00:00Z');
INSERT INTO trials (device_id, problem_id, solver_id, status, started_at, command)
  VALUES (2, 1, 'cpu:direct', 'running', '2026-01-01T00:00:00Z', 'x');
""")
c.commit()
PY
"$CG" db show --db "$TMP/v3.db" >"$TMP/v3.out" 2>&1
check "schema 3 -> 4: the running row is kept" grep -q 'cpu:direct *running' "$TMP/v3.out"
check "schema 3 -> 4: version 4" \
  test "$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT MAX(version) FROM schema_version').fetchone()[0])" "$TMP/v3.db")" = 4

finish
