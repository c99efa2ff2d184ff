#include "db/pg_store.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "core/safe_text.hpp"
#include "db/fields.hpp"
#include "db/pg_api.hpp"
#include "db/sql_text.hpp"

namespace convguard::db {
namespace {

// One lock id for schema creation and migration: probers starting together apply it once.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7243019)";
constexpr const char* kAppPrefix = "convguard ";

// libpq's messages span lines ("...\n\tIs the server running...\n"): one line each, for errors
// that are printed on one.
std::string one_line(const std::string& msg) {
  std::string out;
  for (char c : msg) {
    if (c == '\n' || c == '\t' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

long env_seconds(const char* name, long fallback) {
  if (const char* e = std::getenv(name))
    if (auto v = digits_only(e, 86400)) return *v;
  return fallback;
}

// Whether the prober that holds trials' row is alive: one of its connections is open (they carry
// its token as application_name, which every role may read in pg_stat_activity), or its
// heartbeat renewed the row's lease within `lease_s` seconds (a prober between a lost connection
// and its reconnect, a server restart). Our own integer, never outside text, goes into the SQL.
std::string holder_live(long lease_s) {
  return fmt::format(
      "(EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = '{}' || "
      "trials.holder_session) OR trials.holder_seen > extract(epoch FROM now()) - {})",
      kAppPrefix, lease_s);
}

// A random token for this prober: its holder_session, and (with kAppPrefix) its connections'
// application_name (at most 63 bytes).
std::string new_token() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r) {}
  ~PgResult() { pq().PQclear(r_); }
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  PGresult* get_raw() const { return r_; }
  int rows() const { return pq().PQntuples(r_); }
  long affected() const { return std::strtol(pq().PQcmdTuples(r_), nullptr, 10); }
  // Columns of the row `row` (read_record's interface).
  std::string text(int c) const { return pq().PQgetvalue(r_, row, c); }
  double real(int c) const { return std::strtod(pq().PQgetvalue(r_, row, c), nullptr); }
  std::int64_t integer(int c) const {
    return std::strtoll(pq().PQgetvalue(r_, row, c), nullptr, 10);
  }
  int row = 0;

 private:
  PGresult* r_;
};

// How to connect: ours, then the URL (what it says wins), then what must hold whatever the URL
// says (the token's application_name, the timeouts that keep every call bounded, UTF-8).
struct Conninfo {
  std::string url, app, options;
  PGconn* connect() const {
    const char* keys[] = {"connect_timeout",
                          "keepalives",
                          "keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "tcp_user_timeout",
                          "dbname",
                          "application_name",
                          "options",
                          "client_encoding",
                          nullptr};
    const char* values[] = {
        "10",   "1",    "10", "5", "3", "30000", url.c_str(), app.c_str(), options.c_str(),
        "UTF8", nullptr};
    PGconn* c = pq().PQconnectdbParams(keys, values, 1);
    // The server's notices (NOTICE: relation exists, skipping) are not convguard's output.
    if (c)
      pq().PQsetNoticeProcessor(
          c, [](void*, const char*) {}, nullptr);
    return c;
  }
};

class PgStore final : public Store {
 public:
  PgStore(PGconn* c, Conninfo info, std::string token, std::string display)
      : Store(std::move(display)), conn_(c), info_(std::move(info)), token_(std::move(token)) {}
  ~PgStore() override;
  Status migrate();
  Status lock_for_writing() override { return Status::ok(); }  // claims, trial by trial
  void release_reserve() override {}
  void unlock() override {}
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
  bool replaces_running_rows() const override { return false; }  // they may be live
  Status transaction_begin() override;
  Status transaction_commit() override;
  void transaction_rollback() override;
  // Runs one statement (parameters as text), reconnecting when the connection was lost outside a
  // transaction. Fails with the server's message, naming the database. A store that could not
  // reconnect stays lost: later calls fail at once instead of waiting out another window.
  Result<PgResult> run(const std::string& sql, const std::vector<sql::Param>& params = {});
  Status reconnect();
  Status failure(const std::string& what) const {
    return {StatusCode::io_error, path_ + ": " + what};
  }
  // The heartbeat: a thread with its own connection (carrying the token) that renews the lease
  // of this prober's running rows every lease/3 seconds, so they stay live while a trial runs
  // for minutes without a statement, and across a lost main connection. Started by the first
  // claim; readers never start it.
  void start_heartbeat();
  void heartbeat();

  PGconn* conn_;
  Conninfo info_;
  std::string token_;
  const long lease_s_ = std::max(1L, env_seconds("CONVGUARD_DB_LEASE_S", 20));
  bool in_transaction_ = false;
  Status lost_ = Status::ok();
  std::thread beat_;
  std::mutex beat_mu_;
  std::condition_variable beat_cv_;
  bool beat_stop_ = false;
};

PgStore::~PgStore() {
  if (beat_.joinable()) {
    {
      std::lock_guard lock(beat_mu_);
      beat_stop_ = true;
    }
    beat_cv_.notify_all();
    beat_.join();
  }
  pq().PQfinish(conn_);
}

std::string param_text(const sql::Param& p) {
  if (const auto* t = std::get_if<std::string>(&p)) return valid_utf8(*t);
  if (const auto* d = std::get_if<double>(&p)) return fmt::format("{}", *d);
  return std::to_string(std::get<std::int64_t>(p));
}

Result<PgResult> PgStore::run(const std::string& sql, const std::vector<sql::Param>& params) {
  if (!lost_.is_ok()) return lost_;
  std::vector<std::string> texts;
  for (const auto& p : params) texts.push_back(param_text(p));
  std::vector<const char*> values;
  for (const auto& t : texts) values.push_back(t.c_str());
  for (int attempt = 0;; ++attempt) {
    // Without parameters, the simple protocol: it runs a script of several statements.
    PgResult r(values.empty()
                   ? pq().PQexec(conn_, sql.c_str())
                   : pq().PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                       values.data(), nullptr, nullptr, 0));
    const auto st = pq().PQresultStatus(r.get_raw());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    const std::string msg = one_line(pq().PQerrorMessage(conn_));
    // A statement the server refused is the answer; a lost connection is retried once, after a
    // reconnect, unless a transaction was open (the server has rolled it back). The retry is the
    // same statement: the holder's token does not change with the connection.
    if (pq().PQstatus(conn_) == CONNECTION_OK || attempt > 0) return failure(msg);
    if (in_transaction_) {
      in_transaction_ = false;
      return failure(msg +
                     " (the connection was lost during a transaction: nothing of it was kept)");
    }
    if (auto rs = reconnect(); !rs) {
      lost_ = failure(msg + "; " + rs.message());
      return lost_;
    }
  }
}

Status PgStore::reconnect() {
  const long window = env_seconds("CONVGUARD_DB_RECONNECT_S", 60);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    pq().PQreset(conn_);
    if (pq().PQstatus(conn_) == CONNECTION_OK) return Status::ok();
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (spent >= static_cast<double>(window))
      return {StatusCode::io_error,
              fmt::format("could not reconnect in {:.0f} s (CONVGUARD_DB_RECONNECT_S): {}", spent,
                          one_line(pq().PQerrorMessage(conn_)))};
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

void PgStore::start_heartbeat() {
  if (beat_.joinable()) return;
  beat_ = std::thread([this] { heartbeat(); });
}

void PgStore::heartbeat() {
  PGconn* c = nullptr;
  const auto tick = std::chrono::milliseconds(std::max(300L, lease_s_ * 1000 / 3));
  std::unique_lock lock(beat_mu_);
  while (!beat_cv_.wait_for(lock, tick, [&] { return beat_stop_; })) {
    lock.unlock();
    if (!c) {
      c = info_.connect();
    } else if (pq().PQstatus(c) != CONNECTION_OK) {
      pq().PQreset(c);
    }
    if (c && pq().PQstatus(c) == CONNECTION_OK) {
      const char* values[] = {token_.c_str()};
      pq().PQclear(
          pq().PQexecParams(c,
                            "UPDATE trials SET holder_seen = extract(epoch FROM now()) WHERE "
                            "holder_session = $1 AND status = 'running'",
                            1, nullptr, values, nullptr, nullptr, 0));
    }
    lock.lock();
  }
  lock.unlock();
  pq().PQfinish(c);
}

Status PgStore::migrate() {
  // Only a database without the current schema is written to: readers (env, report, -S auto)
  // may run as roles that cannot create tables, or against a read-only standby.
  if (auto v = run("SELECT MAX(version) FROM schema_version"); v && v->integer(0) == kSchemaVersion)
    return Status::ok();
  std::string sql = std::string("BEGIN; ") + kSchemaLock +
                    "; CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);";
  if (auto r = run(sql); !r) return r.status();
  in_transaction_ = true;
  auto v = run("SELECT COALESCE(MAX(version), 0) FROM schema_version");
  if (!v) return v.status();
  const int version = static_cast<int>(v->integer(0));
  if (version > kSchemaVersion) {
    transaction_rollback();
    return {StatusCode::io_error, "--db " + path_ + ": schema version " + std::to_string(version) +
                                      " is newer than this convguard's (" +
                                      std::to_string(kSchemaVersion) + ")"};
  }
  if (version < kSchemaVersion) {
    // The PostgreSQL store starts at version 4: a new database gets the whole schema.
    if (auto r = run(sql::schema("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY") +
                     "INSERT INTO schema_version VALUES (" + std::to_string(kSchemaVersion) + ");");
        !r) {
      transaction_rollback();
      return r.status();
    }
  }
  return transaction_commit();
}

Status PgStore::transaction_begin() {
  if (auto r = run("BEGIN"); !r) return r.status();
  in_transaction_ = true;
  return Status::ok();
}

Status PgStore::transaction_commit() {
  auto r = run("COMMIT");
  in_transaction_ = false;
  return r ? Status::ok() : r.status();
}

void PgStore::transaction_rollback() {
  if (!in_transaction_) return;
  in_transaction_ = false;
  pq().PQclear(pq().PQexec(conn_, "ROLLBACK"));
}

Status PgStore::add_device(const std::string& fingerprint, const std::string& description) {
  auto r = run(sql::kInsertDevice, {fingerprint, description, now_timestamp()});
  return r ? Status::ok() : r.status();
}

std::optional<TrialRecord> PgStore::find(const std::string& device, const std::string& problem,
                                         const std::string& solver) {
  auto r = run(sql::kFindTrial, {device, problem, solver});
  if (!r) {
    note_read_failure(r.status());
    return std::nullopt;
  }
  if (r->rows() == 0) return std::nullopt;
  return sql::read_record(*r);
}

Result<bool> PgStore::write(const TrialRecord& given, const std::optional<Seen>& claim) {
  TrialRecord r = given;
  if (auto st = check_record(r); !st) return invalid_argument(path_ + ": " + st.message());
  if (auto q = run(sql::kInsertProblem, {r.problem}); !q) return q.status();
  if (auto q = run(sql::kInsertSolver, sql::solver_params(r.solver)); !q) return q.status();
  std::string sql = sql::upsert_trial("extract(epoch FROM now())");
  // A claim takes the row if this prober holds it ($26, its token: a retry after a reconnect),
  // or if it is as the prober saw it ($27, $28: its started_at and status; a row inserted or
  // finished since differs) and no other live prober holds it running. (started_at has whole
  // seconds: a trial another prober started and finished within the second a finished row was
  // seen may run twice; its row is still one.)
  auto params = sql::trial_params(r, now_timestamp(), token_);
  if (claim) {
    start_heartbeat();
    sql +=
        "WHERE trials.holder_session = $26 OR (trials.started_at = $27 AND trials.status = $28 "
        "AND (trials.status <> 'running' OR NOT " +
        holder_live(lease_s_) + "))";
    params.emplace_back(claim->started_at);
    params.emplace_back(claim->status);
  }
  auto q = run(sql, params);
  if (!q) return q.status();
  return q->affected() > 0;
}

Result<int> PgStore::recover_running() {
  const std::string now = now_timestamp();
  const std::string dead = "AND NOT " + holder_live(lease_s_);
  auto twice =
      run(sql::kRecoverTwice + dead, {now, std::string(kDiedTwice), std::string(kRetryAfterDeath)});
  if (!twice) return twice.status();
  auto once = run(sql::kRecoverOnce + dead, {now, std::string(kDiedOnce)});
  if (!once) return once.status();
  return static_cast<int>(twice->affected() + once->affected());
}

std::vector<TrialRecord> PgStore::rows(const std::string& device, const char* column,
                                       const std::string& value) {
  std::vector<sql::Param> params;
  if (!device.empty()) params.emplace_back(device);
  if (column) params.emplace_back(value);
  auto r = run(sql::rows_query(device, column), params);
  std::vector<TrialRecord> v;
  if (!r) {
    note_read_failure(r.status());
    return v;
  }
  for (r->row = 0; r->row < r->rows(); ++r->row) v.push_back(sql::read_record(*r));
  return v;
}

Result<int> PgStore::clear() {
  // Never under a live prober: its next write would meet a store without its device.
  auto live =
      run("SELECT count(*) FROM trials WHERE status = 'running' AND " + holder_live(lease_s_));
  if (!live) return live.status();
  if (live->integer(0) > 0)
    return Status{StatusCode::io_error,
                  fmt::format("{}: {} trial(s) are running under live probers: clear it when they "
                              "have finished",
                              path_, live->integer(0))};
  auto n = run("SELECT count(*) FROM trials");
  if (!n) return n.status();
  // One script: one transaction, all or nothing.
  if (auto r = run(std::string(sql::kClear)); !r) return r.status();
  return static_cast<int>(n->integer(0));
}

Result<std::string> PgStore::integrity_check() {
  // The server keeps its own files consistent; what can be wrong here is a trial that points at
  // nothing (the foreign keys forbid it) or a running row whose holder is gone.
  auto r =
      run("SELECT count(*) FROM trials WHERE status = 'running' AND NOT " + holder_live(lease_s_));
  if (!r) return r.status();
  const auto orphans = r->integer(0);
  if (orphans > 0)
    return fmt::format("{} running trial(s) whose prober is gone (the next probe reclaims them)",
                       orphans);
  return std::string("ok");
}

}  // namespace

bool is_postgres_url(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<Store>> open_postgres(const std::string& url) {
  if (!pq().missing.empty())
    return Status{StatusCode::io_error, "--db " + url + ": " + pq().missing};
  char* err = nullptr;
  PQconninfoOption* opts = pq().PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    // libpq's message quotes the token it could not read, which may be a password.
    pq().PQfreemem(err);
    return invalid_argument(
        "--db: not a PostgreSQL URL libpq can read (a reserved character such as % @ : / in a "
        "name must be percent-encoded; passwords belong in PGPASSWORD or ~/.pgpass)");
  }
  std::string secret;
  for (PQconninfoOption* o = opts; o->keyword; ++o) {
    const std::string k = o->keyword;
    if ((k == "password" || k == "sslpassword") && o->val && *o->val) secret = k;
  }
  pq().PQconninfoFree(opts);
  if (!secret.empty())
    return invalid_argument(
        "--db: the URL carries a " + secret +
        ", which would be written into logs and reports: give it to libpq instead (PGPASSWORD, "
        "~/.pgpass or a service file: PGSERVICE=name and postgresql://?service=name)");
  // Without a secret in it, the URL is what convguard calls the store.
  const std::string token = new_token();
  Conninfo info{url, kAppPrefix + token,
                "-c statement_timeout=60000 -c lock_timeout=30000 "
                "-c idle_in_transaction_session_timeout=120000"};
  PGconn* conn = info.connect();
  if (!conn) return Status{StatusCode::out_of_memory, "--db " + url + ": out of memory"};
  if (pq().PQstatus(conn) != CONNECTION_OK) {
    const std::string msg = one_line(pq().PQerrorMessage(conn));
    pq().PQfinish(conn);
    return Status{StatusCode::io_error, "--db " + url + ": cannot connect: " + msg};
  }
  auto s = std::make_unique<PgStore>(conn, std::move(info), token, url);
  if (auto st = s->migrate(); !st) return st;
  return std::unique_ptr<Store>(std::move(s));
}

}  // namespace convguard::db
