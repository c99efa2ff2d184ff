// Device fingerprints: everything that can change a result, so an upgrade starts fresh evidence
// without deleting the old. For the CPU: model, the ISA the backend may use, thread count, the
// BLAS loaded, convguard's version, the built-in solver set (plugin solvers have their own ids) and
// the vendor libraries CPU plugins loaded (oneDNN's version).
#pragma once

#include <string>

#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::probe {

struct DeviceInfo {
  std::string fingerprint;  // stable key
  std::string description;  // for people
  Device kind = Device::cpu;
  std::string plugin_kind;  // Device::plugin: the plugin's device kind ("hip")
};

DeviceInfo cpu_device();

// Opens a device by name and describes it: "cpu", a GPU of this build's backend ("cuda:N": the
// fingerprint names the GPU, its architecture and size, the driver and runtime, convguard's
// version and GPU solver set, and the vendor libraries plugins loaded), or a device a loaded
// plugin drives ("hip:N"). Bad names are invalid_argument naming the device.
[[nodiscard]] Result<DeviceInfo> open_device(const std::string& name);

// One trial where s's tensors live: host memory, convguard's GPU backend, or the plugin device
// this process opened (worker and driver alike).
TrialResult run_trial_on_device(const Solver& s, const Problem& p, TrialTensors& t,
                                const TrialOptions& o);

}  // namespace convguard::probe
