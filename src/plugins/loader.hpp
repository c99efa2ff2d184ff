// Loads plugins (include/convguard/plugin.h) and exposes their solvers as convguard Solvers.
// Plugins come from --plugin PATH and CONVGUARD_PLUGINS (':'-separated paths). A plugin built
// for another ABI version, or one that says it is unavailable, is not loaded; the reason is kept
// for `convguard solvers` and the probe's report.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::detail {
class DeviceMemory;
}

namespace convguard::plugins {

struct LoadReport {
  std::string path;
  bool loaded = false;
  std::string message;          // why not, or the plugin's name and solver count
  std::string description;      // ABI 2: the vendor library loaded (part of device fingerprints)
  Device device = Device::cpu;  // where its solvers run
};

// Loads every plugin named by CONVGUARD_PLUGINS plus `extra`; idempotent per path.
std::vector<LoadReport> load(const std::vector<std::string>& extra = {});
// What the loaded plugins whose solvers run on `device` said about the vendor libraries they
// loaded (ABI 2 describe()).
std::vector<std::string> descriptions(Device device);
// Solvers of the plugins loaded so far, in load order.
std::vector<const Solver*> plugin_solvers();

// Devices that loaded plugins drive themselves (ABI 3 cg_device_api): "hip:0", ... for each
// device present.
std::vector<std::string> plugin_device_names();
// Whether `device` ("hip:0") names a plugin device kind ("hip") of a loaded plugin.
bool is_plugin_device(const std::string& device);
struct OpenedDevice {
  std::string description, fingerprint;
};
// Opens `device` ("hip:0") in this process: later plugin trials run on it.
[[nodiscard]] Result<OpenedDevice> open_plugin_device(const std::string& device);
// The memory calls of the plugin device kind `kind` ("hip"), for transforms around its solvers;
// nullptr when no loaded plugin drives it.
std::unique_ptr<detail::DeviceMemory> plugin_device_memory(std::string_view kind);
// ABI 4: the compile step of a plugin solver for p (plugin.h prepare()), after its check();
// nullopt when the solver has none (not a plugin's, or a plugin without prepare()).
[[nodiscard]] std::optional<Status> prepare_plugin_solver(const Solver& s, const Problem& p);
// One trial on the opened plugin device (core/staged_trial.hpp with the plugin's memory calls).
TrialResult run_plugin_trial(const Solver& s, const Problem& p, TrialTensors& host,
                             const TrialOptions& o);

}  // namespace convguard::plugins
