// Base of convguard's own GPU solvers: tensors are device pointers; run() enqueues on the default
// stream and returns after the launch is checked (the trial synchronises and times with events).
#pragma once

#include <string>

#include "convguard/solver.hpp"
#include "gpu/geometry.hpp"

namespace convguard::gpu {

// A plan holding the problem's Geometry, computed once: run() then only launches (host overhead
// per call is part of what the probe measures, docs/perf.md).
struct GeometryPlan : Plan {
  explicit GeometryPlan(const Problem& p) : Plan(p), G(make_geometry(p)) {}
  Geometry G;
};

class GpuSolver : public Solver {
 public:
  Device device() const override { return Device::gpu; }
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override {
    if (auto s = check(p); !s) return s;
    return std::unique_ptr<Plan>(new GeometryPlan(p));
  }
  Result<std::size_t> workspace_bytes(const Problem& p) const override {
    if (auto s = check(p); !s) return s;
    return std::size_t{0};
  }

 protected:
  // The geometry GpuSolver::plan() computed.
  static const Geometry& geometry(const Plan& plan) {
    return static_cast<const GeometryPlan&>(plan).G;
  }
};

}  // namespace convguard::gpu
