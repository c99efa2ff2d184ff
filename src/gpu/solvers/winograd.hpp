// gpu:winograd: Winograd F(2x2, 3x3) for forward and backward-data, 2D 3x3 filters, stride 1,
// dilation 1, any padding, groups, layouts and strides, f32/f16/bf16 with fp32 arithmetic.
//
// Backward-data is the forward computation on dy with each filter rotated 180 degrees, k and c
// swapped and padding 2 - pad (gpu/solvers/roles.hpp). A block owns 32 output tiles of 2x2
// (an 8x16 patch of pixels) for 16 output channels; per step of 8 reduction channels it stages
// the 10x18 source patch, transforms it (B^T d B, one tile-channel per thread) and the filters
// (G g G^T) into shared memory, and each thread accumulates the 16 products of two (tile,
// channel) pairs; the inverse transform (A^T m A) runs once at the end. The transforms are
// computed per block, so no workspace is needed.
//
// The transforms add rounding (the filter transform's halves, the sums of 4x4 input terms):
// accuracy() widens the tolerance as for the CPU F(2x2) solver, and integer fills need not match
// exactly.
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class WinogradSolver final : public GpuSolver {
 public:
  std::string_view id() const override { return "gpu:winograd"; }
  Status check(const Problem& p) const override;
  Accuracy accuracy(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
};

}  // namespace convguard::gpu
