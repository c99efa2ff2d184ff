// cpu:bf16_planar:amx_bf16 — bf16 forward on AMX tiles with the pixels along the tiles' columns:
// each product is 16 output channels x 32 input channels of the filter times 16 channel pairs x
// 16 pixels of x, into a 16 channels x 16 pixels block of y. So x is read as planar rows of
// channel pairs (two channels' rows interleaved, no transpose) and each output channel's pixels
// come out as one row, which is how a channels-first (NCHW) y is stored: no transposes either
// side, where cpu:bf16_direct:amx_bf16 (pixels along the tiles' rows) transposes x to
// channels-last pairs and y back (most of its time on 1x1 layers, docs/perf.md).
//
// x is copied onto cpu:bf16_direct's virtual pixel grid for AMX (bf16_amx_bwdw.cpp: per stride
// phase, every tap at one constant offset from the output pixel), as channel pairs; the filter
// is packed per call as [tap][32-channel block][K rounded to 32][32]. An item, 32 output
// channels by 32 grid pixels, keeps its 4 accumulators in tiles over the whole reduction; the
// grid's pixels that are not output pixels are computed and dropped (each output pixel's column
// of a product depends on its own x column only, so nothing they read reaches an output).
// Items run in groups of consecutive chunks, each 32-channel block over a whole group, so that
// the block's filter rows stay in cache (chunk by chunk, res5's 3x3 read its 4.7 MB filter once
// per chunk). With C >= 32, 1x1 filters with no padding and channels-first x take the pointwise
// path instead
// (bf16_kernels.hpp: forward_amx_pointwise): no grid, x read in place and paired a group at a
// time into per-thread buffers (the grid copy wrote and read all of x once more: on 256-1024
// channel layers that took as long as the products).
// C < 32 (first layers: C = 3) reduces over each output pixel's whole window instead (since
// session 35): per tap, C channels would fill few of a product's 16 pair rows (C = 3: 2), so x is
// copied as window pair rows over the output pixels themselves (row j: the window's values 2j and
// 2j + 1, in the filter's own order c * taps + tap; zero in the padding), and the filter as one
// group of those rows: C = 3 with a 3x3 filter is one product of 14 pair rows a 16 x 16 block,
// where cpu:bf16_direct:amx_bf16 takes three of 6 rows each and transposes y. The copy is
// round_up(C x taps, 32) x 2 bytes an output pixel (64 for a 3x3 first layer, 320 for conv1's
// 7x7), so windows whose copy would pass kMaxWindowBytes decline (cpu:bf16_direct:amx_bf16 takes
// them).
// Forward only, one group; any stride, dilation and padding; 1D, 2D, 3D; any layout (the grid
// copies channels-first rows whole).
#pragma once

#include <array>

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class Bf16PlanarAmxSolver final : public StagedSolver {
 public:
  std::string_view id() const override { return "cpu:bf16_planar:amx_bf16"; }
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;
};

namespace bf16 {
// The largest window copy (C < 32) the solver takes: 512 MiB (conv1 at batch 256 would need 1 GB).
inline constexpr std::int64_t kMaxWindowBytes = std::int64_t{512} << 20;
// Bytes of the window copy for geometry G, 0 where G takes no windows (C >= 32).
std::int64_t window_copy_bytes(const detail::Geometry& G);
// Whether the forward pass takes the pointwise path for geometry G and x's strides (N, C, D, H,
// W): C >= 32, a 1x1 filter, no padding, no output pixel past x's end, channels-first x. x is then read in
// place, its channels paired per group of 32-pixel chunks into per-thread buffers (kept from call
// to call, sized for the threads that run: reusable_scratch.hpp), and no grid copy is made.
bool planar_takes_pointwise(const detail::Geometry& G,
                            const std::array<std::int64_t, 5>& x_strides);
// Words of x's pair copy on the grid (none on the pointwise path) and bf16 elements of the packed
// filter for problem geometry G and x's strides.
struct PlanarSizes {
  std::int64_t x_words = 0, w_elements = 0;
};
PlanarSizes planar_sizes(const detail::Geometry& G, const std::array<std::int64_t, 5>& x_strides);
// Milliseconds of each step of one forward_planar (for profiling; the solver passes none).
struct PlanarTimes {
  double copy_x = 0, pack_filter = 0, kernel = 0;
};
// The whole forward pass into t.y (x's grid copy unless pointwise, the filter, the kernel with
// its stores): the solver's compute, and the emulation test's entry. xw holds x_words words;
// invalid_argument where t's x takes the grid and they are fewer than it needs.
[[nodiscard]] Status forward_planar(const detail::Geometry& G, const ConvTensors& t,
                                    std::uint32_t* xw, std::int64_t x_words, std::uint16_t* wp,
                                    PlanarTimes* times = nullptr);
}  // namespace bf16

}  // namespace convguard::cpu
