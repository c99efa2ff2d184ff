#include "plugins/loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>

#include "convguard/plugin.h"

namespace convguard::plugins {
namespace {

cg_problem to_c(const Problem& p) {
  cg_problem c{};
  c.spatial_dims = p.spatial_dims;
  c.g = p.g;
  c.n = p.n;
  c.c = p.c;
  c.k = p.k;
  for (int d = 0; d < 3; ++d) {
    c.input[d] = p.input[d];
    c.filter[d] = p.filter[d];
    c.stride[d] = p.stride[d];
    c.dilation[d] = p.dilation[d];
    c.pad_begin[d] = p.pad_begin[d];
    c.pad_end[d] = p.pad_end[d];
  }
  c.direction = static_cast<int32_t>(p.direction);
  c.dtype = static_cast<int32_t>(p.dtype);
  const TensorDesc x = x_desc(p), w = w_desc(p), y = y_desc(p);
  for (int i = 0; i < 5; ++i) {
    c.x_strides[i] = i < x.rank ? x.strides[i] : 0;
    c.w_strides[i] = i < w.rank ? w.strides[i] : 0;
    c.y_strides[i] = i < y.rank ? y.strides[i] : 0;
  }
  return c;
}

cg_tensor to_c(const TensorView& t) {
  cg_tensor c{};
  c.data = t.data;
  c.dtype = static_cast<int32_t>(t.desc.dtype);
  c.rank = t.desc.rank;
  for (int i = 0; i < 5; ++i) {
    c.dims[i] = t.desc.dims[i];
    c.strides[i] = t.desc.strides[i];
  }
  return c;
}

std::string message_of(const char* buf) {
  return buf[0] ? std::string(buf) : std::string("(no message)");
}

class PluginSolver final : public Solver {
 public:
  PluginSolver(const cg_solver* s, Device d) : s_(s), id_(s->id), device_(d) {}
  std::string_view id() const override { return id_; }
  Device device() const override { return device_; }
  Status check(const Problem& p) const override {
    if (auto st = validate(p); !st) return st;
    char msg[512] = {};
    const cg_problem cp = to_c(p);
    const int rc = s_->check(&cp, msg, sizeof msg);
    if (rc == CG_OK) return Status::ok();
    return not_applicable(message_of(msg));
  }
  Result<std::size_t> workspace_bytes(const Problem& p) const override {
    if (auto st = check(p); !st) return st;
    const cg_problem cp = to_c(p);
    const std::uint64_t b = s_->workspace_bytes(&cp);
    if (b > (std::uint64_t{1} << 50)) {
      return Status{StatusCode::out_of_memory, fmt::format("workspace of {} bytes requested", b)};
    }
    return static_cast<std::size_t>(b);
  }
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override {
    const cg_problem cp = to_c(plan.problem);
    const cg_tensor x = to_c(t.x), w = to_c(t.w), y = to_c(t.y);
    char msg[512] = {};
    const int rc = s_->run(&cp, &x, &w, &y, ws.data(), ws.size(), msg, sizeof msg);
    if (rc == CG_OK) return Status::ok();
    if (rc == CG_OUT_OF_MEMORY) return {StatusCode::out_of_memory, message_of(msg)};
    return {StatusCode::internal_error, message_of(msg)};
  }
  Accuracy accuracy(const Problem&) const override { return {false, 1.0}; }

 private:
  const cg_solver* s_;
  std::string id_;
  Device device_;
};

struct Registry {
  std::mutex mu;
  std::vector<std::string> paths;
  std::vector<LoadReport> reports;
  std::vector<std::unique_ptr<PluginSolver>> solvers;
};
Registry& registry() {
  static Registry r;
  return r;
}

LoadReport load_one(Registry& r, const std::string& path) {
  LoadReport rep;
  rep.path = path;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    rep.message = fmt::format("cannot load: {}", dlerror());
    return rep;
  }
  auto entry = reinterpret_cast<cg_plugin_entry>(dlsym(h, CONVGUARD_PLUGIN_ENTRY));
  if (!entry) {
    rep.message =
        fmt::format("no {}() entry point: not a convguard plugin", CONVGUARD_PLUGIN_ENTRY);
    return rep;
  }
  const cg_plugin* pl = entry();
  if (!pl || (pl->abi_version != 1 && pl->abi_version != CONVGUARD_PLUGIN_ABI_VERSION)) {
    rep.message = fmt::format("built for plugin ABI {}, convguard reads 1 and {}",
                              pl ? pl->abi_version : 0, CONVGUARD_PLUGIN_ABI_VERSION);
    return rep;
  }
  char msg[512] = {};
  if (pl->available && pl->available(msg, sizeof msg) != CG_OK) {
    rep.message = fmt::format("{}: unavailable: {}", pl->name, message_of(msg));
    return rep;
  }
  const bool v2 = pl->abi_version >= 2;
  const Device device = v2 && pl->device == CG_DEVICE_GPU ? Device::gpu : Device::cpu;
  if (v2 && pl->describe) rep.description = pl->describe();
  for (std::uint64_t i = 0; i < pl->solver_count; ++i) {
    r.solvers.push_back(std::make_unique<PluginSolver>(&pl->solvers[i], device));
  }
  rep.loaded = true;
  rep.message = fmt::format("{}: {} solvers", pl->name, pl->solver_count);
  return rep;  // the handle stays open for the life of the process
}

}  // namespace

std::vector<LoadReport> load(const std::vector<std::string>& extra) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> want;
  if (const char* env = std::getenv("CONVGUARD_PLUGINS")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':')) {
      if (!item.empty()) want.push_back(item);
    }
  }
  want.insert(want.end(), extra.begin(), extra.end());
  for (const auto& path : want) {
    bool seen = false;
    for (const auto& p : r.paths) seen = seen || p == path;
    if (seen) continue;
    r.paths.push_back(path);
    r.reports.push_back(load_one(r, path));
  }
  return r.reports;
}

std::vector<const Solver*> plugin_solvers() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const Solver*> v;
  for (const auto& s : r.solvers) v.push_back(s.get());
  return v;
}

std::vector<std::string> descriptions() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> v;
  for (const auto& rep : r.reports) {
    if (rep.loaded && !rep.description.empty()) v.push_back(rep.description);
  }
  return v;
}

}  // namespace convguard::plugins
