#include "probe_session.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/safe_text.hpp"
#include "plugins/loader.hpp"
#include "probe/pool.hpp"

namespace convguard::cli {

probe::SweepConfig ProbeSession::sweep_config(const std::string& device) const {
  probe::SweepConfig cfg;
  cfg.device = device;
  if (!plugin_env.empty()) {
    cfg.worker_env.push_back("CONVGUARD_PLUGINS=" + plugin_env);
    // Quoted: the stored command is meant to be pasted into a shell, and a plugin path is text
    // from the environment or the command line (spaces, quotes, `$(...)`).
    cfg.command_prefix = "CONVGUARD_PLUGINS=" + shell_quoted(plugin_env) + " ";
  }
  return cfg;
}

Result<ProbeSession> open_probe_session(const std::vector<std::string>& plugins,
                                        const std::string& db_flag, FILE* info, int& exit_code) {
  exit_code = 2;
  ProbeSession s;
  for (const auto& rep : plugins::load(plugins)) {
    // The load reports cover CONVGUARD_PLUGINS too: name where the path came from.
    const bool flag = std::find(plugins.begin(), plugins.end(), rep.path) != plugins.end();
    if (!rep.loaded)
      return invalid_argument(
          fmt::format("{} {}: {}", flag ? "--plugin" : "CONVGUARD_PLUGINS", rep.path, rep.message));
  }
  if (const char* e = std::getenv("CONVGUARD_PLUGINS")) s.plugin_env = e;
  for (const auto& p : plugins) {
    s.plugin_env += (s.plugin_env.empty() ? "" : ":") + std::filesystem::absolute(p).string();
  }
  s.db_path = db_flag.empty() ? db::default_path() : db_flag;
  auto store = db::Store::open(s.db_path);
  if (!store) return store.status();
  s.db_path = (*store)->path();  // a URL as the store names it
  if (auto st = (*store)->lock_for_writing(); !st) {
    exit_code = 3;
    return st;
  }
  auto recovered = (*store)->recover_running();
  if (!recovered) return recovered.status();
  if (*recovered > 0) {
    std::fprintf(info,
                 "recovered %d trial(s) left running by an earlier probe that died: recorded as "
                 "interrupted (retried once; crash if it dies again)\n",
                 *recovered);
  }
  // Ctrl-C and SIGTERM end the sweep cleanly (the trial in flight is recorded interrupted); a
  // second one ends the process at once (SA_RESETHAND). Orphans of dead workers come back to
  // this process, which ends them (probe/pool.hpp).
  struct sigaction sa {};
  sa.sa_handler = [](int sig) { probe::request_stop(sig); };
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  (void)probe::become_subreaper();
  s.store = std::move(*store);
  exit_code = 0;
  return s;
}

}  // namespace convguard::cli
