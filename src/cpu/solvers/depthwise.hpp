// cpu:depthwise — G == C == K: one filter per channel. Channels-last fp32, vectorised across
// channels (the only dimension with enough independent work); forward and backward-weights read
// a zero-padded input, backward-data gathers dy per input position. All directions, 2D and 3D.
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class DepthwiseSolver final : public StagedSolver {
 public:
  std::string_view id() const override { return "cpu:depthwise"; }
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;
};

}  // namespace convguard::cpu
