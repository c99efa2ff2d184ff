#include "plugins/loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "convguard/canonical.hpp"
#include "convguard/plugin.h"
#include "core/solver_id.hpp"
#include "core/staged_trial.hpp"

namespace convguard::plugins {
namespace {

cg_problem to_c(const Problem& p) {
  cg_problem c{};
  // A 1D problem reaches plugins as its exact lift to 2D (unit height): the tensors already are.
  c.spatial_dims = p.spatial_dims == 1 ? 2 : p.spatial_dims;
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

// A plugin's return code as a Status (CG_DEVICE_LOST: the worker is replaced after the trial).
Status status_of(int rc, const char* msg) {
  switch (rc) {
    case CG_OK:
      return Status::ok();
    case CG_OUT_OF_MEMORY:
      return {StatusCode::out_of_memory, message_of(msg)};
    case CG_DEVICE_LOST:
      return {StatusCode::device_error, message_of(msg)};
    default:
      return {StatusCode::internal_error, message_of(msg)};
  }
}

class PluginSolver final : public Solver {
 public:
  PluginSolver(const cg_solver* s, Device d, const cg_device_api* api, const cg_plugin* pl,
               std::uint64_t index)
      : s_(s), id_(s->id), device_(d), api_(api), plugin_(pl), index_(index) {}
  std::string_view id() const override { return id_; }
  Device device() const override { return device_; }
  std::string_view plugin_device() const override { return api_ ? api_->name : ""; }
  Status check(const Problem& p) const override {
    if (auto st = validate(p); !st) return st;
    const auto cp = vendor_problem(p);
    if (!cp) {
      return not_applicable(
          "end padding: input rows past the last window that no padding >= 0 leaves unread "
          "(vendor libraries take padding >= 0)");
    }
    char msg[512] = {};
    const int rc = s_->check(&*cp, msg, sizeof msg);
    // A plugin may say how it decided that its solver applies (e.g. which vendor call listed
    // it): an ok status carries that note into the trial's record.
    if (rc == CG_OK) return msg[0] ? Status{StatusCode::ok, msg} : Status::ok();
    return not_applicable(message_of(msg));
  }
  Result<std::size_t> workspace_bytes(const Problem& p) const override {
    if (auto st = check(p); !st) return st;
    const cg_problem cp = *vendor_problem(p);
    const std::uint64_t b = s_->workspace_bytes(&cp);
    if (b > (std::uint64_t{1} << 50)) {
      return Status{StatusCode::out_of_memory, fmt::format("workspace of {} bytes requested", b)};
    }
    return static_cast<std::size_t>(b);
  }
  // The problem in the plugin's terms is worked out once per plan: run() is on every call's path.
  struct VendorPlan : Plan {
    VendorPlan(const Problem& p, const cg_problem& c) : Plan(p), cp(c) {}
    cg_problem cp;
  };
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override {
    if (auto st = check(p); !st) return st;
    return std::unique_ptr<Plan>(new VendorPlan(p, *vendor_problem(p)));
  }
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override {
    const cg_problem& cp = static_cast<const VendorPlan&>(plan).cp;
    const cg_tensor x = to_c(t.x), w = to_c(t.w), y = to_c(t.y);
    char msg[512] = {};
    const int rc = s_->run(&cp, &x, &w, &y, ws.data(), ws.size(), msg, sizeof msg);
    if (rc == CG_OK) return Status::ok();
    return status_of(rc, msg);
  }
  // Vendor APIs take non-negative padding (cuDNN's legacy API and MIOpen symmetric pads, cuDNN's
  // graph API post-padding): the problem is passed with the equivalent end padding they take
  // (pad_begin where the output is the same, canonical.hpp), never a negative one.
  static std::optional<cg_problem> vendor_problem(const Problem& p) {
    const auto q = with_nonnegative_end_padding(p);
    if (!q) return std::nullopt;
    return to_c(*q);
  }
  // ABI 4: the compile step, when the plugin has one (nullopt otherwise).
  std::optional<Status> prepare(const Problem& p) const {
    if (plugin_->abi_version < 4 || !plugin_->prepare) return std::nullopt;
    if (auto st = check(p); !st) return st;
    const cg_problem cp = *vendor_problem(p);
    char msg[512] = {};
    const int rc = plugin_->prepare(index_, &cp, msg, sizeof msg);
    if (rc == CG_NOT_APPLICABLE) return not_applicable(message_of(msg));
    return status_of(rc, msg);
  }
  // Unknown arithmetic: not required to be exact on integers; TF32 by the id convention.
  Accuracy accuracy(const Problem&) const override {
    Accuracy a{false, 1.0};
    a.local_errors = false;  // a vendor's FFT engines spread error over the whole output
    if (is_tf32_variant(id_)) a.operand_roundoff = kTf32Roundoff;
    return a;
  }

 private:
  const cg_solver* s_;
  std::string id_;
  Device device_;
  const cg_device_api* api_;
  const cg_plugin* plugin_;
  std::uint64_t index_;
};

struct Registry {
  std::mutex mu;
  std::vector<std::string> paths;
  std::vector<LoadReport> reports;
  std::vector<std::unique_ptr<PluginSolver>> solvers;
  std::vector<const cg_device_api*> devices;
  const cg_device_api* opened = nullptr;  // the device open_plugin_device() made current
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
  if (!pl || pl->abi_version < 1 || pl->abi_version > CONVGUARD_PLUGIN_ABI_VERSION) {
    rep.message = fmt::format("built for plugin ABI {}, convguard reads 1 to {}",
                              pl ? pl->abi_version : 0, CONVGUARD_PLUGIN_ABI_VERSION);
    return rep;
  }
  char msg[512] = {};
  if (pl->available && pl->available(msg, sizeof msg) != CG_OK) {
    rep.message = fmt::format("{}: unavailable: {}", pl->name, message_of(msg));
    return rep;
  }
  const bool v2 = pl->abi_version >= 2;
  const cg_device_api* api =
      pl->abi_version >= 3 && pl->device == CG_DEVICE_PLUGIN ? pl->device_api : nullptr;
  if (pl->abi_version >= 3 && pl->device == CG_DEVICE_PLUGIN && !api) {
    rep.message =
        fmt::format("{}: says its solvers run on its own device but has no device_api", pl->name);
    return rep;
  }
  const Device device = api                                 ? Device::plugin
                        : v2 && pl->device == CG_DEVICE_GPU ? Device::gpu
                                                            : Device::cpu;
  // Ids are stored as evidence and written into shell profiles: one outside the grammar
  // (core/solver_id.hpp) refuses the whole plugin here rather than failing a probe later.
  for (std::uint64_t i = 0; i < pl->solver_count; ++i) {
    const char* id = pl->solvers[i].id;
    if (auto st = check_solver_id(id ? id : ""); !st) {
      rep.message = fmt::format("{}: solver {}: id {}", pl->name, i, st.message());
      return rep;
    }
  }
  if (v2 && pl->describe) rep.description = pl->describe();
  rep.device = device;
  if (api) r.devices.push_back(api);
  for (std::uint64_t i = 0; i < pl->solver_count; ++i) {
    r.solvers.push_back(std::make_unique<PluginSolver>(&pl->solvers[i], device, api, pl, i));
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

std::vector<std::string> descriptions(Device device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> v;
  for (const auto& rep : r.reports) {
    if (rep.loaded && rep.device == device && !rep.description.empty())
      v.push_back(rep.description);
  }
  return v;
}

namespace {

const cg_device_api* device_api_named(Registry& r, const std::string& kind) {
  for (const cg_device_api* api : r.devices) {
    if (kind == api->name) return api;
  }
  return nullptr;
}

// The plugin device's memory calls, for the staged trial.
class PluginMemory final : public detail::DeviceMemory {
 public:
  explicit PluginMemory(const cg_device_api* api) : api_(api) {}
  Status allocate(void** p, std::size_t bytes, const char* what) override {
    char msg[512] = {};
    const int rc = api_->alloc(p, bytes, msg, sizeof msg);
    return rc == CG_OK
               ? Status::ok()
               : Status{status_of(rc, msg).code(), std::string(what) + ": " + message_of(msg)};
  }
  void release(void* p) override { api_->release(p); }
  Status copy_in(void* d, const void* h, std::size_t bytes) override {
    char msg[512] = {};
    return status_of(api_->copy(d, h, bytes, 1, msg, sizeof msg), msg);
  }
  Status copy_out(void* h, const void* d, std::size_t bytes) override {
    char msg[512] = {};
    return status_of(api_->copy(h, d, bytes, 0, msg, sizeof msg), msg);
  }
  Status poison(void* d, std::size_t bytes) override {
    char msg[512] = {};
    return status_of(api_->fill_bytes(d, 0xff, bytes, msg, sizeof msg), msg);
  }
  Status synchronize(const char* what) override {
    char msg[512] = {};
    const Status st = status_of(api_->synchronize(msg, sizeof msg), msg);
    return st ? st : Status{st.code(), std::string(what) + ": " + st.message()};
  }

 private:
  const cg_device_api* api_;
};

}  // namespace

std::unique_ptr<detail::DeviceMemory> plugin_device_memory(std::string_view kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const cg_device_api* api = device_api_named(r, std::string(kind));
  if (!api) return nullptr;
  return std::make_unique<PluginMemory>(api);
}

std::vector<std::string> plugin_device_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> v;
  for (const cg_device_api* api : r.devices) {
    const int n = api->count ? api->count() : 0;
    for (int i = 0; i < n; ++i) v.push_back(fmt::format("{}:{}", api->name, i));
  }
  return v;
}

bool is_plugin_device(const std::string& device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return device_api_named(r, device.substr(0, device.find(':'))) != nullptr;
}

Result<OpenedDevice> open_plugin_device(const std::string& device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto colon = device.find(':');
  const cg_device_api* api = device_api_named(r, device.substr(0, colon));
  if (!api) return invalid_argument("device: no loaded plugin drives '" + device + "'");
  int index = -1;
  try {
    index = colon == std::string::npos ? -1 : std::stoi(device.substr(colon + 1));
  } catch (const std::exception&) {
  }
  const int count = api->count ? api->count() : 0;
  if (index < 0 || index >= count) {
    return invalid_argument(
        fmt::format("device: '{}': {} has {} device(s)", device, api->name, count));
  }
  char desc[4096] = {}, fp[4096] = {};  // MIOpen's carry the MIOPEN_* set the worker runs under
  if (const int rc = api->open(index, desc, sizeof desc, fp, sizeof fp); rc != CG_OK) {
    const Status st = status_of(rc, desc);
    return Status{st.code(), "device " + device + ": " + st.message()};
  }
  r.opened = api;
  return OpenedDevice{desc, fp};
}

std::optional<Status> prepare_plugin_solver(const Solver& s, const Problem& p) {
  const auto* ps = dynamic_cast<const PluginSolver*>(&s);
  return ps ? ps->prepare(p) : std::nullopt;
}

TrialResult run_plugin_trial(const Solver& s, const Problem& p, TrialTensors& host,
                             const TrialOptions& o) {
  const cg_device_api* api = nullptr;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    api = r.opened;
  }
  if (!api || s.plugin_device() != api->name) {
    TrialResult res;
    res.status = Status{StatusCode::invalid_argument,
                        std::string(s.id()) + ": its device is not open in this process"};
    return res;
  }
  PluginMemory mem(api);
  return detail::run_staged_trial(s, p, host, o, mem);
}

}  // namespace convguard::plugins
