// cpu:bwdw_gemm:{avx512,avx2,avx512_bf16} — backward-weights as a GEMM whose reduction runs over
// output pixels, on channels-first x and dy:
//   dW[k][c][t] = sum over images n and output pixels p of dy[n][k][p] * x[n][c][p@t]
// where p@t is the input pixel tap t of p reads. Per work item, 64 (channel, tap) columns of x are
// transposed into a [pixel][column] panel, and a register tile broadcasts 6 dy rows against it
// pixel by pixel (6 x 64 on AVX-512; 6 x 16 on AVX2, over the panel's 64 columns in four groups;
// bwdw_gemm_kernels.hpp).
//  - 1x1 (ResNet's bottleneck and projection layers, 15 of its 23): x as it lies, or at a stride
//    or padding gathered first into a dy-shaped copy (a quarter of x at stride 2).
//  - Beyond 1x1, stride 1, 1D/2D (ResNet's stride-1 3x3 layers): x zero-padded and dy re-pitched
//    to x's padded row length, so that every tap is one shift of x's rows; the re-pitched rows'
//    tails are zero in dy and masked to zero in x (0 x inf would be NaN). The tails cost
//    (padded width / output width): 9/7 on a 7x7 layer.
// It complements cpu:nchw_gemm's bf16 backward-weights (dot products along rows, lane sums folded
// per image; on 14x14 and 7x7 planes the rows are a few vectors and the folds dominate) and, on
// 3x3 layers, cpu:bf16_direct and cpu:bwdw. The reduction is cut into chunks of about 1024 words
// fixed by the problem, each with its own partial sums added in chunk order: the same bits on
// every run and thread count.
#pragma once

#include "cpu/isa.hpp"  // KernelCopy
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class BwdwGemmSolver final : public StagedSolver {
 public:
  // bf16_avx512: the vdpbf16ps variant (AVX512_BF16), reading the caller's dense channels-first
  // bf16 tensors with nothing staged and rounding each dW element once; else fp32 on the
  // staging's buffers (AVX-512, or AVX2 with 6 x 2 tiles of 8 lanes over 16 columns at a time).
  explicit BwdwGemmSolver(KernelCopy kernel) : kernel_(kernel) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  KernelCopy kernel_;
  bool bf16() const { return kernel_ == KernelCopy::bf16_avx512; }
};

}  // namespace convguard::cpu
