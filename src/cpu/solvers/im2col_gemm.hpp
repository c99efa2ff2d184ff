// cpu:im2col_gemm — explicit im2col / col2im and BLAS sgemm, per image and group, on
// channels-first fp32. Its column buffer (C/G * taps * output pixels floats) is the extra
// memory this family is known for, and it is what workspace_bytes reports. A 1x1, stride-1,
// unpadded forward or backward-weights skips the column buffer (x already is the matrix).
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class Im2colGemmSolver final : public StagedSolver {
 public:
  std::string_view id() const override { return "cpu:im2col_gemm"; }
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;
};

}  // namespace convguard::cpu
