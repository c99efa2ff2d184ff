// The shared store: a PostgreSQL database (libpq) that a cluster's probers write at once.
// - Credentials come only from libpq's own sources (PGPASSWORD, ~/.pgpass, PGSERVICEFILE and
//   pg_service.conf, PGUSER...): a URL with a password is refused, because the URL is echoed in
//   logs, reports and the reproduce commands of every trial.
// - A trial is claimed in begin(): a row running under another live prober's session is left to
//   it. A prober's session is its server backend (pid@start, from pg_stat_activity): when the
//   prober dies, the server ends its session, and its running rows are reclaimed by the next
//   prober's recover_running.
// - Nothing blocks for long: connecting gives up after 10 s, a statement after 60 s, a silent
//   server is noticed by TCP keepalives and tcp_user_timeout; a lost connection is retried for
//   CONVGUARD_DB_RECONNECT_S seconds (default 60: a server restart), and the prober's own running
//   rows are moved to its new session. After that the call fails with the server's message.
#pragma once

#include <memory>
#include <string>

#include "db/store.hpp"

namespace convguard::db {

// postgresql://... or postgres://...
bool is_postgres_url(const std::string& where);

[[nodiscard]] Result<std::unique_ptr<Store>> open_postgres(const std::string& url);

}  // namespace convguard::db
