#include "convguard/registry.hpp"

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
  for (const Solver* s : plugins::plugin_solvers()) v.push_back(s);
  return v;
}

const Solver* find_solver(std::string_view id) {
  for (const Solver* s : all_solvers()) {
    if (s->id() == id) return s;
  }
  return nullptr;
}

}  // namespace convguard
