// cpu:fft — FFT convolution for 2D forward problems (it pays off for larger filters, where the
// cost no longer grows with the filter area). Per image and group: the zero-padded input planes
// and the (dilated) filters are transformed with a radix-2 complex FFT of the next power-of-two
// size, multiplied pointwise (correlation: X * conj(W)) and summed over input channels, and the
// inverse transform's real part is sampled at the stride. The FFT is convguard's own (a small
// iterative radix-2 with twiddles computed in double). Backward directions are not implemented.
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class FftSolver final : public StagedSolver {
 public:
  std::string_view id() const override { return "cpu:fft"; }
  [[nodiscard]] Status check(const Problem& p) const override;
  Accuracy accuracy(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;
};

}  // namespace convguard::cpu
