-- convguard results database, schema version 3 (2 adds the status 'interrupted'; 3 the status
-- 'compile_timeout' and the compile step's time and deadline). Applied by src/db/store.cpp (migrations run in
-- order from the stored version). One row per (device, problem, solver): the latest evidence.
CREATE TABLE IF NOT EXISTS devices (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,   -- everything that can change a result: hardware, ISA, libraries, convguard version
  description TEXT NOT NULL,
  first_seen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS problems (
  id INTEGER PRIMARY KEY,
  canonical TEXT NOT NULL UNIQUE      -- benchdnn-grammar problem string (docs/problem-strings.md)
);
CREATE TABLE IF NOT EXISTS solvers (
  id TEXT PRIMARY KEY,                -- backend:family[:variant]
  backend TEXT NOT NULL,
  family TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  solver_id TEXT NOT NULL REFERENCES solvers(id),
  status TEXT NOT NULL CHECK (status IN ('running','ok','wrong','hang','crash','error','oom','unsupported','skipped','interrupted','compile_timeout')),
  reason TEXT NOT NULL DEFAULT '',
  first_ms REAL, median_ms REAL, min_ms REAL, runs INTEGER,
  workspace_bytes INTEGER, peak_rss_bytes INTEGER,
  rel_error REAL, max_abs_error REAL, tolerance REAL,
  signal INTEGER, exit_code INTEGER,
  stderr_tail TEXT NOT NULL DEFAULT '',
  deadline_ms REAL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  command TEXT NOT NULL,              -- reproduces the trial
  compile_ms REAL,                    -- a plugin's compile step (MIOpen's *CompileSolution), before deadline_ms started
  compile_deadline_ms REAL,           -- the compile step's own deadline (--compile-timeout)
  UNIQUE (device_id, problem_id, solver_id)
);
CREATE INDEX IF NOT EXISTS trials_status ON trials(status);
