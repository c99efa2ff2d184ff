#include "db/store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "db/fields.hpp"
#include "db/schema_sql.hpp"  // generated from schema.sql: kSchemaSql

namespace convguard::db {
namespace {

// The lock file holds the writer's pid in its first kPidBytes, then kReserveBytes of space held
// back for the writes after a full disk (release_reserve): a few WAL frames of 4 KiB each.
constexpr off_t kPidBytes = 32;
constexpr off_t kReserveBytes = off_t{64} << 10;

std::string now_text() {
  return now_timestamp();
}

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return ok_; }
  Stmt& text(int i, const std::string& v) {
    // The length, not NUL-termination: text is never cut short silently.
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& real(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& integer(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  int step() { return sqlite3_step(s_); }
  std::string col_text(int i) {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double col_real(int i) { return sqlite3_column_double(s_, i); }
  std::int64_t col_int(int i) { return sqlite3_column_int64(s_, i); }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

const char* kSelectTrial =
    "SELECT d.fingerprint, p.canonical, t.solver_id, t.status, t.reason, t.first_ms, t.median_ms, "
    "t.min_ms, "
    "t.runs, t.workspace_bytes, t.peak_rss_bytes, t.rel_error, t.max_abs_error, t.tolerance, "
    "t.signal, "
    "t.exit_code, t.stderr_tail, t.deadline_ms, t.started_at, t.finished_at, t.command, "
    "d.description, t.compile_ms, t.compile_deadline_ms "
    "FROM trials t JOIN devices d ON d.id = t.device_id JOIN problems p ON p.id = t.problem_id ";

TrialRecord read_record(Stmt& s) {
  TrialRecord r;
  r.device = s.col_text(0);
  r.problem = s.col_text(1);
  r.solver = s.col_text(2);
  r.status = s.col_text(3);
  r.reason = s.col_text(4);
  r.first_ms = s.col_real(5);
  r.median_ms = s.col_real(6);
  r.min_ms = s.col_real(7);
  r.runs = static_cast<int>(s.col_int(8));
  r.workspace_bytes = s.col_int(9);
  r.peak_rss_bytes = s.col_int(10);
  r.rel_error = s.col_real(11);
  r.max_abs_error = s.col_real(12);
  r.tolerance = s.col_real(13);
  r.signal = static_cast<int>(s.col_int(14));
  r.exit_code = static_cast<int>(s.col_int(15));
  r.stderr_tail = s.col_text(16);
  r.deadline_ms = s.col_real(17);
  r.started_at = s.col_text(18);
  r.finished_at = s.col_text(19);
  r.command = s.col_text(20);
  r.device_description = s.col_text(21);
  r.compile_ms = s.col_real(22);
  r.compile_deadline_ms = s.col_real(23);
  return r;
}

}  // namespace

std::string default_path() {
  if (const char* p = std::getenv("CONVGUARD_DB"); p && *p) return p;
  std::string base;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    base = x;
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    base = std::string(h) + "/.cache";
  } else {
    base = ".";
  }
  return base + "/convguard/convguard.db";
}

Store::~Store() {
  unlock();
  sqlite3_close(db_);
}

Status Store::failure() const {
  const std::string sqlite = sqlite3_errmsg(db_);
  // A full disk is the failure a user can act on, and SQLite's text ("database or disk is full")
  // does not say which disk or what to do.
  if ((sqlite3_extended_errcode(db_) & 0xff) == SQLITE_FULL) {
    std::error_code ec;
    const auto space = std::filesystem::space(std::filesystem::absolute(path_).parent_path(), ec);
    return {StatusCode::io_error, path_ + ": the disk is full (" +
                                      (ec ? std::string("free space unknown")
                                          : std::to_string(space.available / 1024) + " KiB free") +
                                      "; SQLite: " + sqlite +
                                      "): free space there or give another --db"};
  }
  return {StatusCode::io_error, path_ + ": " + sqlite};
}

Status Store::exec(const std::string& sql) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return failure();
  return Status::ok();
}

Result<std::unique_ptr<Store>> Store::open(const std::string& path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status{StatusCode::io_error,
                  "--db " + path + ": cannot create " + dir.string() + ": " + ec.message()};
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status{StatusCode::io_error, "--db " + path + ": " + msg};
  }
  std::unique_ptr<Store> s(new Store(db, path));
  sqlite3_busy_timeout(db, 10000);
  if (auto st =
          s->exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
      !st)
    return st;
  if (auto st = s->exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);");
      !st)
    return st;
  // Read the version and migrate in one write transaction: two processes opening a new database
  // at once must not both apply the schema (four parallel `db show` once left two version rows).
  if (auto st = s->exec("BEGIN IMMEDIATE;"); !st) return st;
  int version = 0;
  {
    Stmt q(db, "SELECT MAX(version) FROM schema_version");
    if (q.ok() && q.step() == SQLITE_ROW) version = static_cast<int>(q.col_int(0));
  }
  if (version > kSchemaVersion) {
    (void)s->exec("ROLLBACK;");
    return Status{StatusCode::io_error,
                  "--db " + path + ": schema version " + std::to_string(version) +
                      " is newer than this convguard's (" + std::to_string(kSchemaVersion) + ")"};
  }
  // Migrations, in order. A new database gets schema.sql, the current schema, whole.
  std::string migrate;
  if (version < 1) {
    migrate = std::string(kSchemaSql) + "INSERT INTO schema_version VALUES (3);";
  } else if (version < 3) {
    // 1 -> 2: the status CHECK gains 'interrupted'; 2 -> 3: 'compile_timeout' and two columns at
    // the end. SQLite cannot alter a CHECK: the trials table is rebuilt from schema.sql's
    // definition and the old columns copied by name (the new ones stay NULL).
    const char* cols =
        "id, device_id, problem_id, solver_id, status, reason, first_ms, median_ms, min_ms, runs, "
        "workspace_bytes, peak_rss_bytes, rel_error, max_abs_error, tolerance, signal, exit_code, "
        "stderr_tail, deadline_ms, started_at, finished_at, command";
    migrate = std::string(
                  "DROP INDEX IF EXISTS trials_status;"
                  "ALTER TABLE trials RENAME TO trials_old;") +
              kSchemaSql + "INSERT INTO trials (" + cols + ") SELECT " + cols +
              " FROM trials_old; DROP TABLE trials_old;"
              "CREATE INDEX IF NOT EXISTS trials_status ON trials(status);"
              "INSERT INTO schema_version VALUES (3);";
  }
  if (auto st = s->exec(migrate + "COMMIT;"); !st) {
    (void)s->exec("ROLLBACK;");
    return st;
  }
  return s;
}

Status Store::lock_for_writing() {
  if (lock_fd_ >= 0) return Status::ok();
  // Keyed on the file itself, not the name given: a symlink or another spelling of the same
  // database once took a second lock and relabelled the first probe's live trial.
  std::error_code ec;
  const auto real = std::filesystem::weakly_canonical(path_, ec);
  const std::string lock = (ec ? path_ : real.string()) + ".lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return {StatusCode::io_error, lock + ": cannot open"};
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    (void)!::pread(lock_fd_, buf, sizeof buf - 1, 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    return {StatusCode::io_error, "another convguard probe (pid " +
                                      std::string(buf[0] ? buf : "?") + ") is writing " + path_ +
                                      "; wait for it to finish or use another --db"};
  }
  const std::string pid = std::to_string(::getpid());
  (void)!::ftruncate(lock_fd_, 0);
  (void)!::pwrite(lock_fd_, pid.data(), pid.size(), 0);
  // Best effort: a disk already too full for the reserve fails at the first write instead.
  (void)::posix_fallocate(lock_fd_, kPidBytes, kReserveBytes);
  return Status::ok();
}

void Store::release_reserve() {
  if (lock_fd_ >= 0) (void)!::ftruncate(lock_fd_, kPidBytes);
}

void Store::unlock() {
  release_reserve();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the descriptor releases the flock
  lock_fd_ = -1;
}

Status Store::add_device(const std::string& fingerprint, const std::string& description) {
  Stmt s(db_,
         "INSERT OR IGNORE INTO devices (fingerprint, description, first_seen) VALUES (?, ?, ?)");
  s.text(1, fingerprint).text(2, description).text(3, now_text());
  if (s.step() != SQLITE_DONE) return failure();
  return Status::ok();
}

std::optional<TrialRecord> Store::find(const std::string& device, const std::string& problem,
                                       const std::string& solver) {
  Stmt s(db_, (std::string(kSelectTrial) +
               "WHERE d.fingerprint = ? AND p.canonical = ? AND t.solver_id = ?")
                  .c_str());
  s.text(1, device).text(2, problem).text(3, solver);
  if (s.step() == SQLITE_ROW) return read_record(s);
  return std::nullopt;
}

Status Store::upsert(const TrialRecord& given) {
  // Every write is checked by the one grammar (fields.hpp), whoever wrote the record.
  TrialRecord r = given;
  if (auto st = check_record(r); !st) return invalid_argument(path_ + ": " + st.message());
  {
    Stmt p(db_, "INSERT OR IGNORE INTO problems (canonical) VALUES (?)");
    p.text(1, r.problem);
    if (p.step() != SQLITE_DONE) return failure();
    const auto first = r.solver.find(':');
    const auto second = r.solver.find(':', first == std::string::npos ? first : first + 1);
    Stmt s(db_, "INSERT OR IGNORE INTO solvers (id, backend, family) VALUES (?, ?, ?)");
    s.text(1, r.solver)
        .text(2, r.solver.substr(0, first))
        .text(3, first == std::string::npos ? r.solver
                                            : r.solver.substr(first + 1, second - first - 1));
    if (s.step() != SQLITE_DONE) return failure();
  }
  Stmt s(
      db_,
      "INSERT INTO trials (device_id, problem_id, solver_id, status, reason, first_ms, median_ms, "
      "min_ms, runs, "
      "workspace_bytes, peak_rss_bytes, rel_error, max_abs_error, tolerance, signal, exit_code, "
      "stderr_tail, "
      "deadline_ms, started_at, finished_at, command, compile_ms, compile_deadline_ms) VALUES "
      "((SELECT id FROM devices WHERE "
      "fingerprint = ?1), "
      "(SELECT id FROM problems WHERE canonical = ?2), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
      "?13, ?14, ?15, "
      "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23) ON CONFLICT (device_id, problem_id, solver_id) DO "
      "UPDATE SET "
      "status = excluded.status, reason = excluded.reason, first_ms = excluded.first_ms, median_ms "
      "= "
      "excluded.median_ms, min_ms = excluded.min_ms, runs = excluded.runs, workspace_bytes = "
      "excluded.workspace_bytes, peak_rss_bytes = excluded.peak_rss_bytes, rel_error = "
      "excluded.rel_error, "
      "max_abs_error = excluded.max_abs_error, tolerance = excluded.tolerance, signal = "
      "excluded.signal, "
      "exit_code = excluded.exit_code, stderr_tail = excluded.stderr_tail, deadline_ms = "
      "excluded.deadline_ms, "
      "started_at = excluded.started_at, finished_at = excluded.finished_at, command = "
      "excluded.command, compile_ms = excluded.compile_ms, compile_deadline_ms = "
      "excluded.compile_deadline_ms");
  s.text(1, r.device).text(2, r.problem).text(3, r.solver).text(4, r.status).text(5, r.reason);
  s.real(6, r.first_ms).real(7, r.median_ms).real(8, r.min_ms).integer(9, r.runs);
  s.integer(10, r.workspace_bytes).integer(11, r.peak_rss_bytes);
  s.real(12, r.rel_error).real(13, r.max_abs_error).real(14, r.tolerance);
  s.integer(15, r.signal).integer(16, r.exit_code).text(17, r.stderr_tail).real(18, r.deadline_ms);
  s.text(19, r.started_at.empty() ? now_text() : r.started_at);
  s.text(20, r.status == "running" ? "" : (r.finished_at.empty() ? now_text() : r.finished_at))
      .text(21, r.command);
  s.real(22, r.compile_ms).real(23, r.compile_deadline_ms);
  if (s.step() != SQLITE_DONE) return failure();
  return Status::ok();
}

namespace {
// A running row's reason when the trial before it was cut off by the prober's death: if the prober
// dies during this one too, the trial counts against the solver (recover_running).
constexpr const char* kRetryAfterDeath = "retry of a trial the prober died during";
constexpr const char* kDiedOnce =
    "left running: the prober or the machine died during this trial (kill -9, power loss?); "
    "not yet evidence against the solver: the next probe runs it once more";
}  // namespace

Status Store::begin(const TrialRecord& r) {
  TrialRecord j = r;
  j.status = "running";
  j.started_at = now_text();
  if (auto prev = find(r.device, r.problem, r.solver);
      prev && prev->status == "interrupted" && prev->reason == kDiedOnce)
    j.reason = kRetryAfterDeath;
  return upsert(j);
}

Status Store::finish(const TrialRecord& r) {
  return upsert(r);
}

Result<int> Store::recover_running() {
  // A trial left running was in flight when the prober died. Once is not evidence (the user's
  // kill -9, a power cut): `interrupted`, retried. Twice in a row, the trial itself is the likely
  // cause (it takes the machine or the prober down): `crash`.
  Stmt twice(db_,
             "UPDATE trials SET status = 'crash', finished_at = ?1, reason = 'the prober or the "
             "machine died during this trial twice in a row (interrupted, retried, died again)' "
             "WHERE status = 'running' AND reason = ?2");
  twice.text(1, now_text()).text(2, kRetryAfterDeath);
  if (twice.step() != SQLITE_DONE) return failure();
  const int crashed = sqlite3_changes(db_);
  Stmt once(db_,
            "UPDATE trials SET status = 'interrupted', finished_at = ?1, reason = ?2 WHERE status "
            "= 'running'");
  once.text(1, now_text()).text(2, kDiedOnce);
  if (once.step() != SQLITE_DONE) return failure();
  return crashed + sqlite3_changes(db_);
}

std::vector<TrialRecord> Store::all(const std::string& device) {
  std::vector<TrialRecord> v;
  Stmt s(db_, (std::string(kSelectTrial) + (device.empty() ? "" : "WHERE d.fingerprint = ? ") +
               "ORDER BY p.canonical, t.solver_id")
                  .c_str());
  if (!device.empty()) s.text(1, device);
  while (s.step() == SQLITE_ROW) v.push_back(read_record(s));
  return v;
}

std::vector<TrialRecord> Store::where(const std::string& device, const char* column,
                                      const std::string& value) {
  std::vector<TrialRecord> v;
  Stmt s(db_, (std::string(kSelectTrial) + "WHERE d.fingerprint = ? AND " + column +
               " = ? ORDER BY p.canonical, t.solver_id")
                  .c_str());
  s.text(1, device).text(2, value);
  while (s.step() == SQLITE_ROW) v.push_back(read_record(s));
  return v;
}

std::vector<TrialRecord> Store::for_problem(const std::string& device, const std::string& problem) {
  return where(device, "p.canonical", problem);
}

std::vector<TrialRecord> Store::for_solver(const std::string& device, const std::string& solver) {
  return where(device, "t.solver_id", solver);
}

Result<ImportOutcome> Store::import_records(std::vector<TrialRecord> records) {
  ImportOutcome out;
  if (auto st = exec("BEGIN IMMEDIATE;"); !st) return st;
  auto one = [&](TrialRecord& r) -> Status {
    if (auto st = check_record(r, Origin::import); !st) return st;
    if (r.status == "running") {
      ++out.kept;
      return Status::ok();
    }
    if (auto st =
            add_device(r.device, r.device_description.empty() ? r.device : r.device_description);
        !st)
      return st;
    auto mine = find(r.device, r.problem, r.solver);
    // Checked timestamps of one format compare as strings; ties keep this database's row.
    if (mine && mine->status != "running" && mine->finished_at >= r.finished_at) {
      ++out.kept;
      return Status::ok();
    }
    if (auto st = upsert(r); !st) return st;
    ++out.imported;
    if (mine) out.replaced.push_back({r.device, r.problem, r.solver, mine->status, r.status});
    return Status::ok();
  };
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (auto st = one(records[i]); !st) {
      (void)exec("ROLLBACK;");
      return Status{st.code(), "record " + std::to_string(i + 1) + ": " + st.message()};
    }
  }
  if (auto st = exec("COMMIT;"); !st) {
    (void)exec("ROLLBACK;");
    return st;
  }
  return out;
}

Result<int> Store::clear() {
  if (auto st = exec(
          "DELETE FROM trials; DELETE FROM problems; DELETE FROM solvers; DELETE FROM devices;");
      !st) {
    return st;
  }
  return sqlite3_changes(db_);
}

Result<std::string> Store::integrity_check() {
  Stmt s(db_, "PRAGMA integrity_check");
  if (s.step() != SQLITE_ROW) return failure();
  return s.col_text(0);
}

}  // namespace convguard::db
