// gpu:direct: tiled shared-memory direct convolution, every direction, 2D and 3D, any strides,
// f32/f16/bf16, fp32 accumulation, no GEMM reformulation.
//
// Forward and backward-data share one kernel: a block computes an 8x32 tile of output pixels
// (one depth slice) for 8 output channels; per step it stages the source patch under the tile
// (x for forward, dy for backward-data) for up to 8 reduction channels, plus their weights, in
// shared memory, and each thread sums its pixel's taps from there. Backward-data reads dy only at
// the taps that land on the stride grid, so strided problems need no zero-inserted dy.
// Backward-weights: a block owns 8 k x 8 c x one filter row (all its columns) and walks the
// output rows 32 pixels at a time, staging dy and the x row segment those pixels read; when those
// blocks alone would leave the GPU idle the walk is split and fp32 partials are summed in a
// fixed order (workspace), so results do not depend on scheduling.
//
// Declines, with the reason, what does not fit: a patch or filter row larger than 48 KiB of
// shared memory (very large stride x dilation), or filters wider than 16 for backward-weights.
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class DirectSolver final : public GpuSolver {
 public:
  std::string_view id() const override { return "gpu:direct"; }
  Status check(const Problem& p) const override;
  // Backward-weights' split partial sums (fp32) when the split is used, else 0.
  Result<std::size_t> workspace_bytes(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
};

}  // namespace convguard::gpu
