// cpu:bwdw_gemm:{avx512,avx512_bf16} — backward-weights of 1x1 convolutions (ResNet's bottleneck
// and projection layers, 15 of its 23 distinct layers) as a GEMM whose reduction runs over
// output pixels, on channels-first x and dy read where they lie:
//   dW[k][c] = sum over images n and output pixels p of dy[n][k][p] * x[n][c][p@]
// where p@ is p's input pixel. With a stride or padding, x is first gathered into a dy-shaped
// copy (zero where p@ is padding): a quarter of x at stride 2, beside a GEMM of K times its size.
// Per work item, 64 x channels are transposed into a [pixel][channel] panel, and a 6 x 64 register
// tile broadcasts 6 dy rows against it pixel by pixel (bwdw_gemm_kernels.hpp). It is the
// complement of cpu:nchw_gemm's bf16 backward-weights (dot products along both tensors' rows,
// lane sums folded per image): on 14x14 and 7x7 planes those rows are a few vectors long and the
// folds and tails dominate, while here the plane's size does not matter. A 56x56 layer is close.
// The reduction is cut into chunks of about 1024 words fixed by the problem, each with its own
// partial sums added in chunk order: the same bits on every run and thread count.
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class BwdwGemmSolver final : public StagedSolver {
 public:
  // bf16: the vdpbf16ps variant (AVX512_BF16), reading the caller's dense channels-first bf16
  // tensors with nothing staged and rounding each dW element once; else fp32 on the staging's
  // buffers.
  explicit BwdwGemmSolver(bool bf16) : bf16_(bf16) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  bool bf16_;
};

}  // namespace convguard::cpu
