// The journal's rules, written once for both stores (store.hpp); the backends are in
// sqlite_store.cpp and pg_store.cpp.
#include "db/store.hpp"

#include <unistd.h>

#include <cstdlib>

#include "db/fields.hpp"
#include "db/pg_store.hpp"
#include "db/schema_sql.hpp"  // generated from schema.sql: kSchemaSql
#include "db/sql_text.hpp"
#include "db/sqlite_store.hpp"

namespace convguard::db {

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

std::string holder_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "unknown-host";
  return name;
}

std::string sql::schema(const char* rowid) {
  std::string s = kSchemaSql;
  for (std::size_t at; (at = s.find("{ROWID}")) != std::string::npos;) s.replace(at, 7, rowid);
  return s;
}

Result<std::unique_ptr<Store>> Store::open(const std::string& where) {
  if (is_postgres_url(where)) return open_postgres(where);
  return open_sqlite(where);
}

bool retries_a_death(const std::optional<TrialRecord>& seen) {
  return seen && (seen->status == "running" ||
                  (seen->status == "interrupted" && seen->reason == kDiedOnce));
}

Result<Claim> Store::begin(const TrialRecord& r, const std::optional<TrialRecord>& seen) {
  TrialRecord j = r;
  j.status = "running";
  j.started_at = now_timestamp();
  // A row still running here was held by a prober that died (a live one's is not taken: write's
  // claim), and one recovered as died-once is that trial's retry: if this prober dies during it
  // too, recover_running counts it against the solver.
  if (retries_a_death(seen)) j.reason = kRetryAfterDeath;
  auto wrote = write(j, seen ? Seen{seen->started_at, seen->status} : Seen{});
  if (!wrote) return wrote.status();
  return *wrote ? Claim::taken : Claim::held_elsewhere;
}

Status Store::finish(const TrialRecord& r) {
  auto wrote = write(r, std::nullopt);
  return wrote ? Status::ok() : wrote.status();
}

std::vector<TrialRecord> Store::all(const std::string& device) {
  return rows(device, nullptr, "");
}

std::vector<TrialRecord> Store::for_problem(const std::string& device, const std::string& problem) {
  return rows(device, "p.canonical", problem);
}

std::vector<TrialRecord> Store::for_solver(const std::string& device, const std::string& solver) {
  return rows(device, "t.solver_id", solver);
}

void Store::note_read_failure(Status st) {
  if (read_failure_.is_ok()) read_failure_ = std::move(st);
}

Status Store::read_failure() {
  Status st = std::move(read_failure_);
  read_failure_ = Status::ok();
  return st;
}

Result<ImportOutcome> Store::import_records(std::vector<TrialRecord> records) {
  ImportOutcome out;
  if (auto st = transaction_begin(); !st) return st;
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
    if (auto st = read_failure(); !st) return st;
    if (mine && mine->status == "running" && !replaces_running_rows()) {
      ++out.kept;
      return Status::ok();
    }
    // Checked timestamps of one format compare as strings; ties keep this database's row.
    if (mine && mine->status != "running" && mine->finished_at >= r.finished_at) {
      ++out.kept;
      return Status::ok();
    }
    if (auto wrote = write(r, std::nullopt); !wrote) return wrote.status();
    ++out.imported;
    if (mine) out.replaced.push_back({r.device, r.problem, r.solver, mine->status, r.status});
    return Status::ok();
  };
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (auto st = one(records[i]); !st) {
      transaction_rollback();
      return Status{st.code(), "record " + std::to_string(i + 1) + ": " + st.message()};
    }
  }
  if (auto st = transaction_commit(); !st) {
    transaction_rollback();
    return st;
  }
  return out;
}

}  // namespace convguard::db
