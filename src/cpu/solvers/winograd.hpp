// cpu:winograd:f2x2_3x3 and cpu:winograd:f4x4_3x3 — Winograd minimal filtering (Lavin & Gray)
// for 2D 3x3 filters, stride 1, dilation 1. Per group, in batches of up to 256 tiles that run
// across images: input tiles are transformed
// (B^T d B), multiplied with transformed filters (G g G^T) as alpha^2 independent BLAS GEMMs over
// channels, and transformed back (A^T m A). Backward-data is the forward pass of dy with the
// filters flipped and transposed (K <-> C), which needs both paddings <= 2. The transforms
// amplify rounding error (more for F(4x4)), which accuracy() reports to verification.
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class WinogradSolver final : public StagedSolver {
 public:
  explicit WinogradSolver(int tile) : m_(tile) {}  // output tile: 2 or 4
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;
  Accuracy accuracy(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  int m_;
};

}  // namespace convguard::cpu
