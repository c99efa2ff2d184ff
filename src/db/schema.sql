-- convguard results database, schema version 4 (2 adds the status 'interrupted'; 3 the status
-- 'compile_timeout' and the compile step's time and deadline; 4 the holder of a running row).
-- One text for both stores: src/db/sqlite_store.cpp and src/db/pg_store.cpp apply it (migrations
-- run in order from the stored version), each replacing {ROWID} with its own integer key. Types
-- are spelled so that both read them alike (DOUBLE PRECISION and BIGINT: SQLite's REAL and INTEGER are 8 bytes,
-- PostgreSQL's are 4). One row per (device, problem, solver): the latest evidence.
CREATE TABLE IF NOT EXISTS devices (
  id {ROWID},
  fingerprint TEXT NOT NULL UNIQUE,   -- everything that can change a result: hardware, ISA, libraries, convguard version
  description TEXT NOT NULL,
  first_seen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS problems (
  id {ROWID},
  canonical TEXT NOT NULL UNIQUE      -- benchdnn-grammar problem string (docs/problem-strings.md)
);
CREATE TABLE IF NOT EXISTS solvers (
  id TEXT PRIMARY KEY,                -- backend:family[:variant]
  backend TEXT NOT NULL,
  family TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
  id {ROWID},
  device_id BIGINT NOT NULL REFERENCES devices(id),
  problem_id BIGINT NOT NULL REFERENCES problems(id),
  solver_id TEXT NOT NULL REFERENCES solvers(id),
  status TEXT NOT NULL CHECK (status IN ('running','ok','wrong','hang','crash','error','oom','unsupported','skipped','interrupted','compile_timeout')),
  reason TEXT NOT NULL DEFAULT '',
  first_ms DOUBLE PRECISION, median_ms DOUBLE PRECISION, min_ms DOUBLE PRECISION, runs INTEGER,
  workspace_bytes BIGINT, peak_rss_bytes BIGINT,
  rel_error DOUBLE PRECISION, max_abs_error DOUBLE PRECISION, tolerance DOUBLE PRECISION,
  signal INTEGER, exit_code INTEGER,
  stderr_tail TEXT NOT NULL DEFAULT '',
  deadline_ms DOUBLE PRECISION,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  command TEXT NOT NULL,              -- reproduces the trial
  compile_ms DOUBLE PRECISION,        -- a plugin's compile step (MIOpen's *CompileSolution), before deadline_ms started
  compile_deadline_ms DOUBLE PRECISION, -- the compile step's own deadline (--compile-timeout)
  holder_host TEXT NOT NULL DEFAULT '',   -- the prober that holds a running row: its host,
  holder_pid BIGINT NOT NULL DEFAULT 0,   -- its pid,
  holder_session TEXT NOT NULL DEFAULT '', -- and its token (PostgreSQL: its sessions' application_name)
  holder_seen DOUBLE PRECISION NOT NULL DEFAULT 0, -- PostgreSQL: when the holder last said it is alive (server epoch s)
  UNIQUE (device_id, problem_id, solver_id)
);
CREATE INDEX IF NOT EXISTS trials_status ON trials(status);
