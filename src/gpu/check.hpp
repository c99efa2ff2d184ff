// Runtime results as Status: allocation failures are out_of_memory; faults that leave the
// context unusable (illegal address, launch failure, ...) are device_error, on which the probe
// replaces its worker; anything else is internal_error. Never aborts.
#pragma once

#include <string>

#include "convguard/status.hpp"
#include "gpu/runtime.hpp"

namespace convguard::gpu {

inline bool is_sticky(Error e) {
#if defined(__HIPCC__) || defined(CONVGUARD_HIP)
  return e == hipErrorIllegalAddress || e == hipErrorLaunchFailure || e == hipErrorAssert ||
         e == hipErrorIllegalState;
#else
  return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure ||
         e == cudaErrorIllegalInstruction || e == cudaErrorMisalignedAddress ||
         e == cudaErrorHardwareStackError || e == cudaErrorInvalidPc || e == cudaErrorAssert ||
         e == cudaErrorInvalidAddressSpace;
#endif
}

inline Status check(Error e, const char* what) {
  if (e == kSuccess) return Status::ok();
  const std::string m = std::string(what) + ": " + error_name(e) + " (" + error_string(e) + ")";
  if (e == CG_GPU(ErrorMemoryAllocation)) return {StatusCode::out_of_memory, m};
  if (is_sticky(e)) return {StatusCode::device_error, m};
  return {StatusCode::internal_error, m};
}

// After a launch: the launch's own error (bad configuration) without waiting for the kernel.
inline Status check_launch(const char* what) {
  return check(last_error(), what);
}

}  // namespace convguard::gpu
