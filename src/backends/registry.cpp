#include "convguard/registry.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "backends/device_memory.hpp"
#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"
#include "transforms/parse.hpp"

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

std::unique_ptr<detail::DeviceMemory> device_memory_for(Device d, std::string_view plugin_kind) {
  switch (d) {
    case Device::gpu:
      return gpu::device_memory();
    case Device::plugin:
      return plugins::plugin_device_memory(plugin_kind);
    case Device::cpu:
      break;
  }
  return nullptr;
}

namespace {

transforms::MemoryFactory memory_for(const Solver& inner) {
  if (inner.device() == Device::cpu) return nullptr;
  return [d = inner.device(), kind = std::string(inner.plugin_device())] {
    return device_memory_for(d, kind);
  };
}

}  // namespace

Result<const Solver*> resolve_solver(std::string_view id) {
  for (const Solver* s : all_solvers()) {
    if (s->id() == id) return s;
  }
  if (!transforms::is_transform_id(id))
    return invalid_argument(fmt::format("unknown solver '{}' (convguard solvers lists them)", id));
  // Transforms are built on demand and never freed (find_solver hands out plain pointers), one
  // per canonical id; an id spelled another way (tile(32) for tile(32x32)) is an alias.
  static std::recursive_mutex mu;  // recursive: an inner id may be a transform too
  static std::map<std::string, std::unique_ptr<transforms::TransformSolver>, std::less<>> built;
  static std::map<std::string, const Solver*, std::less<>> aliases;
  std::lock_guard<std::recursive_mutex> lock(mu);
  if (auto it = aliases.find(id); it != aliases.end()) return it->second;
  transforms::Resolver r;
  r.find = [](std::string_view inner) { return resolve_solver(inner); };
  r.memory = memory_for;
  auto t = transforms::make_transform(id, r);
  if (!t) return t.status();
  const std::string canonical((*t)->id());
  auto it = built.find(canonical);
  if (it == built.end()) it = built.emplace(canonical, std::move(*t)).first;
  aliases.emplace(std::string(id), it->second.get());
  aliases.emplace(canonical, it->second.get());
  return it->second.get();
}

const Solver* find_solver(std::string_view id) {
  auto s = resolve_solver(id);
  return s ? *s : nullptr;
}

}  // namespace convguard
