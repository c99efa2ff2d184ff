// Device fingerprints: everything that can change a result, so an upgrade starts fresh evidence
// without deleting the old. For the CPU: model, the ISA the backend may use, thread count, the
// BLAS loaded, convguard's version and the built-in solver set (plugin solvers have their own ids).
#pragma once

#include <string>

#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::probe {

struct DeviceInfo {
  std::string fingerprint;  // stable key
  std::string description;  // for people
};

DeviceInfo cpu_device();

// One trial where s's tensors live: host memory, convguard's GPU backend, or the plugin device
// this process opened (worker and driver alike).
TrialResult run_trial_on_device(const Solver& s, const Problem& p, TrialTensors& t,
                                const TrialOptions& o);

}  // namespace convguard::probe
