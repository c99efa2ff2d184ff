// cpu:bwdw_rows:{avx512,avx2,avx512_bf16} — backward-weights as dot products along output rows, on
// channels-first x and dy (dy read in place when the caller's is dense channels-first):
//   dW[k][c][tap] = sum over output rows r and columns ow of dy[k][r][ow] * x[c][r@tap + ow]
// x is zero-padded (staging) and, for a width stride sw > 1, split into sw column phases, so that
// every tap's inputs along an output row are one contiguous run: the vectors run along the output
// row in both operands and no lane idles on a small channel count. It is cpu:bwdw's complement:
// that family vectorises over channels (or filter width x channels), which a first layer (C = 3)
// fills with 3 of 16 lanes; here 4 output channels x 6 (channel, tap) columns share each step's
// 10 loads (bwdw_rows_kernels.hpp). Rows narrower than a vector waste the rest of it (a 7-wide
// output uses 7 of 16 lanes): measured selection, not check(), decides against it there.
// The reduction is split into chunks of output rows fixed by the problem, each with its own
// partial sums added in chunk order: the same bits on every run and thread count. Declined: a
// padded, phase-split x over 16 GiB (huge paddings with huge strides; the sizes would overflow).
#pragma once

#include "cpu/isa.hpp"  // KernelCopy
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class BwdwRowsSolver final : public StagedSolver {
 public:
  // bf16_avx512: the vdpbf16ps variant (AVX512_BF16), reading and writing the caller's dense
  // channels-first bf16 tensors with nothing staged (x copied only where it needs padding or a
  // phase split) and rounding each dW element once; else fp32 on the staging's buffers (AVX-512,
  // or AVX2 with 3 x 4 tiles of 8 lanes).
  explicit BwdwRowsSolver(KernelCopy kernel) : kernel_(kernel) {}
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
