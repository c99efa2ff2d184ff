// Device fingerprints: everything that can change a result, so an upgrade starts fresh evidence
// without deleting the old. For the CPU: model, the ISA the backend may use, thread count, the
// BLAS loaded, convguard's version and the built-in solver set (plugin solvers have their own ids).
#pragma once

#include <string>

namespace convguard::probe {

struct DeviceInfo {
  std::string fingerprint;  // stable key
  std::string description;  // for people
};

DeviceInfo cpu_device();

}  // namespace convguard::probe
