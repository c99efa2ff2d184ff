// Base of convguard's own GPU solvers: tensors are device pointers; run() enqueues on the default
// stream and returns after the launch is checked (the trial synchronises and times with events).
#pragma once

#include <string>

#include "convguard/solver.hpp"
#include "gpu/geometry.hpp"

namespace convguard::gpu {

class GpuSolver : public Solver {
 public:
  Device device() const override { return Device::gpu; }
  Result<std::size_t> workspace_bytes(const Problem& p) const override {
    if (auto s = check(p); !s) return s;
    return std::size_t{0};
  }
};

}  // namespace convguard::gpu
