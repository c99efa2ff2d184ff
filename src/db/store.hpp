// The results database: one SQLite file (WAL), written only by the probe's parent process.
// Before a trial is sent to a worker its row is written as `running` (a journal), so a crash of
// the worker, the parent or the machine is attributed to the right (device, problem, solver).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convguard/status.hpp"

struct sqlite3;

namespace convguard::db {

inline constexpr int kSchemaVersion = 3;

struct TrialRecord {
  std::string device;  // fingerprint
  std::string device_description;
  std::string problem;  // canonical string
  std::string solver;
  std::string status, reason;
  double first_ms = 0, median_ms = 0, min_ms = 0;
  int runs = 0;
  std::int64_t workspace_bytes = 0, peak_rss_bytes = 0;
  double rel_error = 0, max_abs_error = 0, tolerance = 0;
  int signal = 0, exit_code = -1;
  std::string stderr_tail;
  double deadline_ms = 0;
  std::string started_at, finished_at, command;
  // A plugin's compile step, timed apart from the run (0: none); its deadline (--compile-timeout).
  double compile_ms = 0, compile_deadline_ms = 0;
};

// The statuses that mark a solver bad for a problem: never chosen, skipped by later probes,
// listed by `env`, wrapped by the probe's workarounds.
inline bool is_bad_status(const std::string& status) {
  return status == "hang" || status == "crash" || status == "wrong";
}

// What an import did: rows written, rows kept because ours is as new or newer, and each row an
// import replaced (the same device, problem and solver, with both statuses).
struct Replaced {
  std::string device, problem, solver, old_status, new_status;
};
struct ImportOutcome {
  int imported = 0, kept = 0;
  std::vector<Replaced> replaced;
};

// Default location: $CONVGUARD_DB, else $XDG_CACHE_HOME/convguard/convguard.db, else
// ~/.cache/convguard/convguard.db.
std::string default_path();

class Store {
 public:
  ~Store();
  // Opens (creating directories and the schema as needed) and migrates.
  [[nodiscard]] static Result<std::unique_ptr<Store>> open(const std::string& path);
  // Takes the writer's lock (a lock file next to the database): one probe writes at a time.
  // Fails at once, saying who holds it, when another process does. It also reserves a little
  // space on the database's disk (in the lock file), which release_reserve() gives back so that
  // the writes after a full disk (the trial cut off marked interrupted) still fit.
  [[nodiscard]] Status lock_for_writing();
  void release_reserve();
  void unlock();

  [[nodiscard]] Status add_device(const std::string& fingerprint, const std::string& description);
  std::optional<TrialRecord> find(const std::string& device, const std::string& problem,
                                  const std::string& solver);
  // The journal: the row exists as `running` before the trial is sent.
  [[nodiscard]] Status begin(const TrialRecord& r);
  [[nodiscard]] Status finish(const TrialRecord& r);
  // Rows left `running` by a parent or machine that died: recorded as crash. Returns how many.
  [[nodiscard]] Result<int> recover_running();
  std::vector<TrialRecord> all(const std::string& device = "");
  // Every record of one problem (any solver) / of one solver (any problem) on a device.
  std::vector<TrialRecord> for_problem(const std::string& device, const std::string& problem);
  std::vector<TrialRecord> for_solver(const std::string& device, const std::string& solver);
  [[nodiscard]] Result<std::string> integrity_check();
  // Import: all records or none, in one transaction. Each is checked (fields.hpp: check_record for
  // an import); the first bad one fails the whole import, its message prefixed "record N: " (N from
  // 1). Callers that can name a file and line check each record themselves first. A record replaces
  // this database's row for the same trial only when it finished later (ties keep ours); running
  // rows are not imported.
  [[nodiscard]] Result<ImportOutcome> import_records(std::vector<TrialRecord> records);
  [[nodiscard]] Result<int> clear();
  const std::string& path() const { return path_; }

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  [[nodiscard]] Status exec(const std::string& sql);
  // The last SQLite error as a status naming the database (and, for SQLITE_FULL, the full disk).
  [[nodiscard]] Status failure() const;
  [[nodiscard]] Status upsert(const TrialRecord& r);
  std::vector<TrialRecord> where(const std::string& device, const char* column,
                                 const std::string& value);
  sqlite3* db_;
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace convguard::db
