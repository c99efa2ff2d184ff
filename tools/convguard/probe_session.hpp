// What every command that runs sandboxed trials sets up the same way (probe, bisect): plugins
// loaded here and handed to the workers, the results database opened, locked for writing, and
// trials left running by a dead prober recovered as crashes.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "probe/sweep.hpp"

namespace convguard::cli {

struct ProbeSession {
  std::unique_ptr<db::Store> store;
  std::string db_path;
  std::string plugin_env;  // CONVGUARD_PLUGINS for the workers (environment plus --plugin)
  int exit_code = 0;       // on failure: 2 bad input, 3 the database is locked by another probe
  // A sweep configuration for `device` with the workers' environment and reproduce prefix.
  probe::SweepConfig sweep_config(const std::string& device) const;
};

// Loads --plugin paths and opens the database (--db, else the default); messages about
// recovered trials go to `info`. On failure the status says why and exit_code is set.
[[nodiscard]] Result<ProbeSession> open_probe_session(const std::vector<std::string>& plugins,
                                                      const std::string& db_flag, FILE* info,
                                                      int& exit_code);

}  // namespace convguard::cli
