#include "db/sqlite_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "db/fields.hpp"
#include "db/sql_text.hpp"

namespace convguard::db {
namespace {

// The lock file holds the writer's pid in its first kPidBytes, then kReserveBytes of space held
// back for the writes after a full disk (release_reserve): a few WAL frames of 4 KiB each.
constexpr off_t kPidBytes = 32;
constexpr off_t kReserveBytes = off_t{64} << 10;

// sql_text.hpp's $N parameters as SQLite's ?N (same numbering).
std::string sqlite_params(const char* sql) {
  std::string s = sql;
  for (char& c : s)
    if (c == '$') c = '?';
  return s;
}

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) {
    ok_ = sqlite3_prepare_v2(db, sqlite_params(sql.c_str()).c_str(), -1, &s_, nullptr) == SQLITE_OK;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return ok_; }
  Stmt& bind(int i, const std::string& v) {
    // The length, not NUL-termination: text is never cut short silently.
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind_all(const std::vector<sql::Param>& params) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i + 1);
      if (const auto* t = std::get_if<std::string>(&params[i])) bind(at, *t);
      if (const auto* d = std::get_if<double>(&params[i])) sqlite3_bind_double(s_, at, *d);
      if (const auto* n = std::get_if<std::int64_t>(&params[i])) sqlite3_bind_int64(s_, at, *n);
    }
    return *this;
  }
  int step() { return ok_ ? sqlite3_step(s_) : SQLITE_ERROR; }
  std::string text(int i) const {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int i) const { return sqlite3_column_double(s_, i); }
  std::int64_t integer(int i) const { return sqlite3_column_int64(s_, i); }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path) : Store(std::move(path)), db_(db) {}
  ~SqliteStore() override {
    unlock();
    sqlite3_close(db_);
  }
  Status migrate();
  Status lock_for_writing() override;
  void release_reserve() override;
  void unlock() override;
  Status add_device(const std::string& fingerprint, const std::string& description) override;
  std::optional<TrialRecord> find(const std::string& device, const std::string& problem,
                                  const std::string& solver) override;
  Result<int> recover_running() override;
  Result<std::string> integrity_check() override;
  Result<int> clear() override;

 private:
  Result<bool> write(const TrialRecord& r, const std::optional<Seen>& claim) override;
  std::vector<TrialRecord> rows(const std::string& device, const char* column,
                                const std::string& value) override;
  Status transaction_begin() override { return exec("BEGIN IMMEDIATE;"); }
  Status transaction_commit() override { return exec("COMMIT;"); }
  void transaction_rollback() override { (void)exec("ROLLBACK;"); }
  Status exec(const std::string& sql);
  // The last SQLite error as a status naming the database (and, for SQLITE_FULL, the full disk).
  Status failure() const;
  Status run(const char* sql, const std::vector<sql::Param>& params);

  sqlite3* db_;
  int lock_fd_ = -1;
};

Status SqliteStore::failure() const {
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

Status SqliteStore::exec(const std::string& sql) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return failure();
  return Status::ok();
}

Status SqliteStore::run(const char* sql, const std::vector<sql::Param>& params) {
  Stmt s(db_, sql);
  if (s.bind_all(params).step() != SQLITE_DONE) return failure();
  return Status::ok();
}

Status SqliteStore::migrate() {
  if (auto st = exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
      !st)
    return st;
  if (auto st = exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);"); !st)
    return st;
  // Read the version and migrate in one write transaction: two processes opening a new database
  // at once must not both apply the schema (four parallel `db show` once left two version rows).
  if (auto st = exec("BEGIN IMMEDIATE;"); !st) return st;
  int version = 0;
  {
    Stmt q(db_, "SELECT MAX(version) FROM schema_version");
    if (q.step() == SQLITE_ROW) version = static_cast<int>(q.integer(0));
  }
  if (version > kSchemaVersion) {
    (void)exec("ROLLBACK;");
    return Status{StatusCode::io_error,
                  "--db " + path_ + ": schema version " + std::to_string(version) +
                      " is newer than this convguard's (" + std::to_string(kSchemaVersion) + ")"};
  }
  // Migrations, in order. A new database gets schema.sql, the current schema, whole.
  const std::string schema = sql::schema("INTEGER PRIMARY KEY");
  std::string migrate;
  if (version < 1) {
    migrate = schema;
  } else if (version < 3) {
    // 1 -> 2: the status CHECK gains 'interrupted'; 2 -> 3: 'compile_timeout' and two columns at
    // the end. SQLite cannot alter a CHECK: the trials table is rebuilt from schema.sql's
    // definition and the old columns copied by name (the new ones take their defaults).
    const char* cols =
        "id, device_id, problem_id, solver_id, status, reason, first_ms, median_ms, min_ms, runs, "
        "workspace_bytes, peak_rss_bytes, rel_error, max_abs_error, tolerance, signal, exit_code, "
        "stderr_tail, deadline_ms, started_at, finished_at, command";
    migrate = "DROP INDEX IF EXISTS trials_status; ALTER TABLE trials RENAME TO trials_old;" +
              schema + "INSERT INTO trials (" + cols + ") SELECT " + cols +
              " FROM trials_old; DROP TABLE trials_old;"
              "CREATE INDEX IF NOT EXISTS trials_status ON trials(status);";
  } else if (version < 4) {
    // 3 -> 4: the holder of a running row, four columns at the end.
    migrate =
        "ALTER TABLE trials ADD COLUMN holder_host TEXT NOT NULL DEFAULT '';"
        "ALTER TABLE trials ADD COLUMN holder_pid BIGINT NOT NULL DEFAULT 0;"
        "ALTER TABLE trials ADD COLUMN holder_session TEXT NOT NULL DEFAULT '';"
        "ALTER TABLE trials ADD COLUMN holder_seen DOUBLE PRECISION NOT NULL DEFAULT 0;";
  }
  if (version < kSchemaVersion)
    migrate += "INSERT INTO schema_version VALUES (" + std::to_string(kSchemaVersion) + ");";
  if (auto st = exec(migrate + "COMMIT;"); !st) {
    (void)exec("ROLLBACK;");
    return st;
  }
  return Status::ok();
}

Status SqliteStore::lock_for_writing() {
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

void SqliteStore::release_reserve() {
  if (lock_fd_ >= 0) (void)!::ftruncate(lock_fd_, kPidBytes);
}

void SqliteStore::unlock() {
  release_reserve();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the descriptor releases the flock
  lock_fd_ = -1;
}

Status SqliteStore::add_device(const std::string& fingerprint, const std::string& description) {
  return run(sql::kInsertDevice, {fingerprint, description, now_timestamp()});
}

std::optional<TrialRecord> SqliteStore::find(const std::string& device, const std::string& problem,
                                             const std::string& solver) {
  Stmt s(db_, sql::kFindTrial);
  const int rc = s.bind_all({device, problem, solver}).step();
  if (rc == SQLITE_ROW) return sql::read_record(s);
  if (rc != SQLITE_DONE) note_read_failure(failure());
  return std::nullopt;
}

Result<bool> SqliteStore::write(const TrialRecord& given,
                                const std::optional<Seen>& /*claim: the lock is ours*/) {
  // Every write is checked by the one grammar (fields.hpp), whoever wrote the record.
  TrialRecord r = given;
  if (auto st = check_record(r); !st) return invalid_argument(path_ + ": " + st.message());
  if (auto st = run(sql::kInsertProblem, {r.problem}); !st) return st;
  if (auto st = run(sql::kInsertSolver, sql::solver_params(r.solver)); !st) return st;
  if (auto st = run(sql::upsert_trial("0").c_str(), sql::trial_params(r, now_timestamp(), "")); !st)
    return st;
  return true;
}

Result<int> SqliteStore::recover_running() {
  // The writer's lock is ours: every running row was left by a prober that died. Once is not
  // evidence (the user's kill -9, a power cut): `interrupted`, retried. Twice in a row, the trial
  // itself is the likely cause (it takes the machine or the prober down): `crash`.
  const std::string now = now_timestamp();
  if (auto st =
          run(sql::kRecoverTwice, {now, std::string(kDiedTwice), std::string(kRetryAfterDeath)});
      !st)
    return st;
  const int crashed = sqlite3_changes(db_);
  if (auto st = run(sql::kRecoverOnce, {now, std::string(kDiedOnce)}); !st) return st;
  return crashed + sqlite3_changes(db_);
}

std::vector<TrialRecord> SqliteStore::rows(const std::string& device, const char* column,
                                           const std::string& value) {
  std::vector<TrialRecord> v;
  Stmt s(db_, sql::rows_query(device, column));
  std::vector<sql::Param> params;
  if (!device.empty()) params.emplace_back(device);
  if (column) params.emplace_back(value);
  s.bind_all(params);
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) v.push_back(sql::read_record(s));
  if (rc != SQLITE_DONE) note_read_failure(failure());
  return v;
}

Result<int> SqliteStore::clear() {
  if (auto st = exec(sql::kClear); !st) return st;
  return sqlite3_changes(db_);
}

Result<std::string> SqliteStore::integrity_check() {
  Stmt s(db_, "PRAGMA integrity_check");
  if (s.step() != SQLITE_ROW) return failure();
  return s.text(0);
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite(const std::string& path) {
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
  auto s = std::make_unique<SqliteStore>(db, path);
  sqlite3_busy_timeout(db, 10000);
  if (auto st = s->migrate(); !st) return st;
  return std::unique_ptr<Store>(std::move(s));
}

}  // namespace convguard::db
