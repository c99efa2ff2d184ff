#include "convguard/registry.hpp"

#include <fnmatch.h>

#include <cstdlib>
#include <string>

#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"

namespace convguard {

std::vector<const Solver*> all_solvers() {
  static const bool loaded_env_plugins = [] {
    (void)plugins::load();  // CONVGUARD_PLUGINS; failures are kept in the load reports
    return true;
  }();
  (void)loaded_env_plugins;
  std::vector<const Solver*> v;
  for (const Solver* s : cpu_solvers()) v.push_back(s);
  for (const Solver* s : gpu::gpu_solvers()) v.push_back(s);
  for (const Solver* s : plugins::plugin_solvers()) v.push_back(s);
  return v;
}

std::vector<const Solver*> solvers_on(Device d) {
  std::vector<const Solver*> v;
  for (const Solver* s : all_solvers()) {
    if (s->device() == d) v.push_back(s);
  }
  return v;
}

bool skipped_by_environment(std::string_view id) {
  const char* env = std::getenv("CONVGUARD_SKIP_SOLVERS");
  if (!env || !*env) return false;
  const std::string list = env, name(id);
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string glob = list.substr(start, end - start);
    if (!glob.empty() && fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
    start = end + 1;
  }
  return false;
}

const Solver* find_solver(std::string_view id) {
  for (const Solver* s : all_solvers()) {
    if (s->id() == id) return s;
  }
  return nullptr;
}

}  // namespace convguard
