// The results database: one SQLite file (WAL) by default, or a PostgreSQL database shared by a
// cluster's probers (--db postgresql://...). Before a trial is sent to a worker its row is written
// as `running` (a journal), with the prober that holds it (host, pid and, on PostgreSQL, its server
// session), so a crash of the worker, the prober or the machine is attributed to the right
// (device, problem, solver), and a dead prober's trials are reclaimed, not left running.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convguard/status.hpp"

namespace convguard::db {

// 4 adds the holder of a running row (holder_host, holder_pid, holder_session, holder_seen).
inline constexpr int kSchemaVersion = 4;

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
// ~/.cache/convguard/convguard.db. $CONVGUARD_DB may be a postgresql:// URL.
std::string default_path();

// Whether begin() took the trial: a PostgreSQL store shared by several probers declines a trial
// another live prober holds (so probers of one sweep share its work, never run it twice at once).
enum class Claim { taken, held_elsewhere };

// The store: the journal and its evidence. SQLite (sqlite_store.cpp) and PostgreSQL
// (pg_store.cpp) implement the primitives; the journal's rules (retry after a death, what an
// import replaces) are written once, here.
class Store {
 public:
  virtual ~Store() = default;
  // A path opens (creating directories and the schema as needed) and migrates a SQLite file;
  // postgresql://... or postgres://... connects to PostgreSQL (pg_store.hpp: credentials come from
  // libpq's environment, service and password files, never from the URL).
  [[nodiscard]] static Result<std::unique_ptr<Store>> open(const std::string& where);
  // SQLite: takes the writer's lock (a lock file next to the database): one probe writes at a
  // time. Fails at once, saying who holds it, when another process does. It also reserves a
  // little space on the database's disk (in the lock file), which release_reserve() gives back so
  // that the writes after a full disk (the trial cut off marked interrupted) still fit.
  // PostgreSQL: many probers write at once; trials are claimed one by one (begin).
  [[nodiscard]] virtual Status lock_for_writing() = 0;
  virtual void release_reserve() = 0;
  virtual void unlock() = 0;

  [[nodiscard]] virtual Status add_device(const std::string& fingerprint,
                                          const std::string& description) = 0;
  virtual std::optional<TrialRecord> find(const std::string& device, const std::string& problem,
                                          const std::string& solver) = 0;
  // The journal: the row exists as `running`, held by this prober, before the trial is sent.
  // `seen` is the row (or none) the caller decided on: the claim fails (held_elsewhere) when
  // another prober has started the trial since (a trial runs once, not once per prober).
  [[nodiscard]] Result<Claim> begin(const TrialRecord& r, const std::optional<TrialRecord>& seen);
  [[nodiscard]] Status finish(const TrialRecord& r);
  // Rows left `running` by a prober that died (SQLite: every one, the writer's lock being ours;
  // PostgreSQL: those whose holder's session has ended): `interrupted` the first time, `crash`
  // when a retry of the same trial was cut off again. Returns how many.
  [[nodiscard]] virtual Result<int> recover_running() = 0;
  std::vector<TrialRecord> all(const std::string& device = "");
  // Every record of one problem (any solver) / of one solver (any problem) on a device.
  std::vector<TrialRecord> for_problem(const std::string& device, const std::string& problem);
  std::vector<TrialRecord> for_solver(const std::string& device, const std::string& solver);
  // The first read that failed since the last call (a lost server, a corrupt file), or ok: the
  // readers above return what they could read, and a reader that reports evidence checks this.
  [[nodiscard]] Status read_failure();
  [[nodiscard]] virtual Result<std::string> integrity_check() = 0;
  // Import: all records or none, in one transaction. Each is checked (fields.hpp: check_record for
  // an import); the first bad one fails the whole import, its message prefixed "record N: " (N from
  // 1). Callers that can name a file and line check each record themselves first. A record replaces
  // this database's row for the same trial only when it finished later (ties keep ours); running
  // rows are not imported.
  [[nodiscard]] Result<ImportOutcome> import_records(std::vector<TrialRecord> records);
  [[nodiscard]] virtual Result<int> clear() = 0;
  // What messages and reproduce commands name: the path, or the URL without any secret.
  const std::string& path() const { return path_; }

 protected:
  explicit Store(std::string path) : path_(std::move(path)) {}
  // The row as a claimant saw it: its started_at and status (both "": there was no row).
  struct Seen {
    std::string started_at, status;
  };
  // Writes the record (checked by check_record first) as its trial's one row. With `claim`: only
  // if the row is still as seen or this prober holds it, and no other live prober holds it
  // running; returns false otherwise. SQLite, written by one probe at a time, always writes.
  [[nodiscard]] virtual Result<bool> write(const TrialRecord& r,
                                           const std::optional<Seen>& claim) = 0;
  // Rows matching `column = value` on a device (column empty: every row of the device; device
  // empty too: every row), ordered by problem, then solver. A failure goes to note_read_failure.
  virtual std::vector<TrialRecord> rows(const std::string& device, const char* column,
                                        const std::string& value) = 0;
  // Whether an import may replace a row left running (SQLite: yes, the writer's lock is the
  // importer's, so such a row is a dead prober's; PostgreSQL: no, its prober may be running it).
  virtual bool replaces_running_rows() const { return true; }
  [[nodiscard]] virtual Status transaction_begin() = 0;
  [[nodiscard]] virtual Status transaction_commit() = 0;
  virtual void transaction_rollback() = 0;
  void note_read_failure(Status st);

  std::string path_;
  Status read_failure_ = Status::ok();
};

// The journal's texts, shared by the backends' recover_running.
inline constexpr const char* kRetryAfterDeath = "retry of a trial the prober died during";
inline constexpr const char* kDiedOnce =
    "left running: the prober or the machine died during this trial (kill -9, power loss?); "
    "not yet evidence against the solver: the next probe runs it once more";
inline constexpr const char* kDiedTwice =
    "the prober or the machine died during this trial twice in a row (interrupted, retried, died "
    "again)";
// Whether a trial whose row was `seen` like this is the retry of one its prober died during (the
// row left running, or recovered as died-once): begin() marks it so, and the sweep runs it with
// no other trial in flight, so that a second death is attributable to it.
bool retries_a_death(const std::optional<TrialRecord>& seen);
// This process as a holder of running rows: the host's name and the pid.
std::string holder_host();

}  // namespace convguard::db
