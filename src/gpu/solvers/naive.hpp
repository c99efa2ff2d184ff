// gpu:naive: one thread per output element, double accumulation, every direction, 2D and 3D, any
// strides, f32/f16/bf16. The device reference: the probe compares other GPU solvers' outputs with
// it in full; it is itself verified against the host fp64 reference (tests, probe).
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class NaiveSolver final : public GpuSolver {
 public:
  std::string_view id() const override { return "gpu:naive"; }
  Status check(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
};

}  // namespace convguard::gpu
