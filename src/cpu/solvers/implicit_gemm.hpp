// cpu:implicit_gemm:{avx512,avx2} — implicit GEMM on channels-last fp32 with no im2col buffer.
// The GEMM's A operand is addressed through a table of row pointers (one per output pixel and
// filter tap; out-of-image taps point at a zero row), so padding, stride and dilation cost
// nothing in the inner loop. A register tile of 6 pixels x 2 vectors of output channels is
// accumulated over taps x channels against weights packed in 2-vector panels.
//   forward:          y[p][k]  = sum_t,c  x[p@t][c]  * w[k][c][t]
//   backward-data:    dx[p][c] = sum_t,k  dy[p@t][k] * w[k][c][t]   (p@t: the output pixel that
//                     tap t of input pixel p lands on, when the stride hits it)
//   backward-weights: dw[k][c][t] = sum_p x[p@t][c] * dy[p][k]
// The kernels are written once with GCC vector extensions and compiled per ISA: the avx512
// variant uses 16-lane vectors, the avx2 variant 8-lane; check() declines the variant the CPU
// cannot run, so the list falls through from avx512 to avx2 on older CPUs.
#pragma once

#include "cpu/isa.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class ImplicitGemmSolver final : public StagedSolver {
 public:
  explicit ImplicitGemmSolver(Isa isa) : isa_(isa) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  Isa isa_;
};

}  // namespace convguard::cpu
