// cpu:direct — blocked direct convolution on channels-first (NCHW/NCDHW) fp32 with the padding
// materialised, vectorised along the output width. Forward keeps a block of output channels x
// output width in registers (weights packed per channel block so each tap is one broadcast);
// backward-data scatters each dy row into dx planes owned by one thread; backward-weights
// reduces dy x window products in vector lanes. All directions, 2D and 3D, groups, stride,
// dilation, asymmetric padding.
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class DirectSolver final : public StagedSolver {
 public:
  std::string_view id() const override { return "cpu:direct"; }
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;
};

}  // namespace convguard::cpu
