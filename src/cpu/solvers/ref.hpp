// cpu:ref — the fp64 reference convolution as a solver: every problem, slowest, last in the
// list. It is the oracle's twin, so a probe can show that the oracle itself runs on a problem.
#pragma once

#include "convguard/solver.hpp"

namespace convguard::cpu {

class RefSolver final : public Solver {
 public:
  std::string_view id() const override { return "cpu:ref"; }
  [[nodiscard]] Status check(const Problem& p) const override;
  [[nodiscard]] Result<std::size_t> workspace_bytes(const Problem& p) const override;
  [[nodiscard]] Status run(const Plan& plan, const ConvTensors& t,
                           std::span<std::byte> workspace) const override;
};

}  // namespace convguard::cpu
