// The SQL both stores run, in one place: statements use PostgreSQL's $N parameters (the SQLite
// store turns them into its ?N), and a trial's parameters and columns are listed once, so the two
// backends cannot drift apart on what a row holds.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "db/store.hpp"

namespace convguard::db::sql {

// Every trial read: the columns read_record takes, in its order.
inline constexpr const char* kSelectTrial =
    "SELECT d.fingerprint, p.canonical, t.solver_id, t.status, t.reason, t.first_ms, t.median_ms, "
    "t.min_ms, t.runs, t.workspace_bytes, t.peak_rss_bytes, t.rel_error, t.max_abs_error, "
    "t.tolerance, t.signal, t.exit_code, t.stderr_tail, t.deadline_ms, t.started_at, "
    "t.finished_at, t.command, d.description, t.compile_ms, t.compile_deadline_ms "
    "FROM trials t JOIN devices d ON d.id = t.device_id JOIN problems p ON p.id = t.problem_id ";

// One trial by (device, problem, solver).
inline const std::string kFindTrial = std::string(kSelectTrial) +
                                      "WHERE d.fingerprint = $1 AND p.canonical = $2 AND "
                                      "t.solver_id = $3";

inline constexpr const char* kInsertDevice =
    "INSERT INTO devices (fingerprint, description, first_seen) VALUES ($1, $2, $3) "
    "ON CONFLICT DO NOTHING";
inline constexpr const char* kInsertProblem =
    "INSERT INTO problems (canonical) VALUES ($1) ON CONFLICT DO NOTHING";
inline constexpr const char* kInsertSolver =
    "INSERT INTO solvers (id, backend, family) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";

// One trial's row, inserted or replacing the row of the same (device, problem, solver); its
// parameters are trial_params'. `now` is the store's clock for holder_seen (PostgreSQL's server
// time; SQLite has no lease: "0"). A backend may append a WHERE to the DO UPDATE (a claim).
inline std::string upsert_trial(const char* now) {
  return std::string(
             "INSERT INTO trials (device_id, problem_id, solver_id, status, reason, first_ms, "
             "median_ms, min_ms, runs, workspace_bytes, peak_rss_bytes, rel_error, max_abs_error, "
             "tolerance, signal, exit_code, stderr_tail, deadline_ms, started_at, finished_at, "
             "command, compile_ms, compile_deadline_ms, holder_host, holder_pid, holder_session, "
             "holder_seen) VALUES ((SELECT id FROM devices WHERE fingerprint = $1), "
             "(SELECT id FROM problems WHERE canonical = $2), $3, $4, $5, $6, $7, $8, $9, $10, "
             "$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, ") +
         now +
         ") ON CONFLICT (device_id, problem_id, solver_id) DO UPDATE SET "
         "status = excluded.status, reason = excluded.reason, first_ms = excluded.first_ms, "
         "median_ms = excluded.median_ms, min_ms = excluded.min_ms, runs = excluded.runs, "
         "workspace_bytes = excluded.workspace_bytes, peak_rss_bytes = excluded.peak_rss_bytes, "
         "rel_error = excluded.rel_error, max_abs_error = excluded.max_abs_error, "
         "tolerance = excluded.tolerance, signal = excluded.signal, exit_code = "
         "excluded.exit_code, "
         "stderr_tail = excluded.stderr_tail, deadline_ms = excluded.deadline_ms, "
         "started_at = excluded.started_at, finished_at = excluded.finished_at, "
         "command = excluded.command, compile_ms = excluded.compile_ms, "
         "compile_deadline_ms = excluded.compile_deadline_ms, holder_host = excluded.holder_host, "
         "holder_pid = excluded.holder_pid, holder_session = excluded.holder_session, "
         "holder_seen = excluded.holder_seen ";
}

// Running rows that were cut off: twice (a retry died again) and once. $1 the time, $2 the
// reason; a backend appends which running rows are dead (SQLite: all of them).
// A retry whose prober died again counts against the solver only when it was the only trial that
// prober had running: with several in flight (--jobs, several devices) the death is no one's in
// particular, and every one of them is interrupted once more (the sweep then runs each retry
// alone, so the next death during one is its own).
inline constexpr const char* kRecoverTwice =
    "UPDATE trials SET status = 'crash', finished_at = $1, reason = $2, holder_host = '', "
    "holder_pid = 0, holder_session = '', holder_seen = 0 WHERE status = 'running' AND "
    "reason = $3 AND (SELECT COUNT(*) FROM trials AS other WHERE other.status = 'running' AND "
    "other.holder_session = trials.holder_session) = 1 ";
inline constexpr const char* kRecoverOnce =
    "UPDATE trials SET status = 'interrupted', finished_at = $1, reason = $2, holder_host = '', "
    "holder_pid = 0, holder_session = '', holder_seen = 0 WHERE status = 'running' ";

inline constexpr const char* kClear =
    "DELETE FROM trials; DELETE FROM problems; DELETE FROM solvers; DELETE FROM devices;";

using Param = std::variant<std::string, double, std::int64_t>;

// upsert_trial's parameters for a checked record; the holder's fields only for a running row.
inline std::vector<Param> trial_params(const TrialRecord& r, const std::string& now,
                                       const std::string& session) {
  const bool running = r.status == "running";
  return {r.device,
          r.problem,
          r.solver,
          r.status,
          r.reason,
          r.first_ms,
          r.median_ms,
          r.min_ms,
          std::int64_t{r.runs},
          r.workspace_bytes,
          r.peak_rss_bytes,
          r.rel_error,
          r.max_abs_error,
          r.tolerance,
          std::int64_t{r.signal},
          std::int64_t{r.exit_code},
          r.stderr_tail,
          r.deadline_ms,
          r.started_at.empty() ? now : r.started_at,
          running ? std::string() : (r.finished_at.empty() ? now : r.finished_at),
          r.command,
          r.compile_ms,
          r.compile_deadline_ms,
          running ? holder_host() : std::string(),
          std::int64_t{running ? static_cast<std::int64_t>(::getpid()) : 0},
          running ? session : std::string()};
}

// A solver id's backend and family columns ("cpu:winograd:f2x2_3x3" -> "cpu", "winograd").
inline std::vector<Param> solver_params(const std::string& id) {
  const auto first = id.find(':');
  const auto second = id.find(':', first == std::string::npos ? first : first + 1);
  return {id, id.substr(0, first),
          first == std::string::npos ? id : id.substr(first + 1, second - first - 1)};
}

// A row of kSelectTrial, through a backend's typed column readers.
template <class Row>
TrialRecord read_record(const Row& s) {
  TrialRecord r;
  r.device = s.text(0);
  r.problem = s.text(1);
  r.solver = s.text(2);
  r.status = s.text(3);
  r.reason = s.text(4);
  r.first_ms = s.real(5);
  r.median_ms = s.real(6);
  r.min_ms = s.real(7);
  r.runs = static_cast<int>(s.integer(8));
  r.workspace_bytes = s.integer(9);
  r.peak_rss_bytes = s.integer(10);
  r.rel_error = s.real(11);
  r.max_abs_error = s.real(12);
  r.tolerance = s.real(13);
  r.signal = static_cast<int>(s.integer(14));
  r.exit_code = static_cast<int>(s.integer(15));
  r.stderr_tail = s.text(16);
  r.deadline_ms = s.real(17);
  r.started_at = s.text(18);
  r.finished_at = s.text(19);
  r.command = s.text(20);
  r.device_description = s.text(21);
  r.compile_ms = s.real(22);
  r.compile_deadline_ms = s.real(23);
  return r;
}

// kSelectTrial's WHERE and ORDER BY for Store::rows (parameters from $1).
inline std::string rows_query(const std::string& device, const char* column) {
  std::string q = kSelectTrial;
  int n = 0;
  if (!device.empty()) q += "WHERE d.fingerprint = $" + std::to_string(++n) + " ";
  if (column) {
    q += std::string(n ? "AND " : "WHERE ") + column;
    q += " = $" + std::to_string(n + 1) + " ";
  }
  return q + "ORDER BY p.canonical, t.solver_id";
}

// The schema (schema.sql) with the backend's integer key.
std::string schema(const char* rowid);

}  // namespace convguard::db::sql
