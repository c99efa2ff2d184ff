// cpu:bf16_direct:avx512_bf16 — bf16 problems in all three directions on AVX512_BF16's vdpbf16ps
// (each lane adds two bf16 products to an fp32 sum: twice the multiply-adds of an fp32 FMA), the
// instruction oneDNN's bf16 kernels use. Every other own CPU solver computes bf16 problems in
// fp32 (the staging converts).
//
// cpu:bf16_direct:amx_bf16 — the same packing and passes with the forward kernel on AMX tiles
// (tdpbf16ps: a 16 x 32 by 32 x 16 bf16 product a step, bf16_amx.cpp), so forward and
// backward-data, and backward-weights with its own AMX kernel (x rows along virtual pixels
// times dy as pixel pairs, bf16_amx_bwdw.cpp). Intel Sapphire Rapids and later, Linux 5.16+.
//
// Nothing is staged (StagingSpec::stage = false): bf16_pack.hpp reads the caller's bf16 tensors,
// any layout and strides, straight into 32-bit pair layouts, and each finished output row is
// rounded to bf16 (as float_to_bfloat rounds) into the caller's tensor from the computing
// thread's cache. The kernels sit behind bf16_kernels.hpp (no library templates in ISA files).
//
// Forward: x as [N][D][H][W][ceil(C/2)] pairs of adjacent channels (channels-last, padding
// materialised), the filter as [ceil(K/16)][taps][ceil(C/2)][16] pairs (16 output channels, one
// per lane; an odd C or a K not a multiple of 16 is zero-filled). A register tile of up to 6
// output pixels (which may span rows) by 64 output channels (24 accumulators) reads one broadcast
// x pair and four filter vectors per step. One group; 1D, 2D and 3D; any stride, dilation and
// padding.
//
// Backward-data (dilation 1, any stride and padding; bf16_bwd_data.cpp): each stride phase of dx
// is a stride-1 forward pass of the same kernel over one padded pair copy of dy, with a flipped
// sub-filter whose K and C are swapped by the packing.
//
// Backward-weights reduces over output pixels, so its pairs are two adjacent output pixels: dy as
// [N][OD][OH][ceil(OW/2)][Kp] pairs (16 output channels per vector), x as pairs of each padded
// element and the one `stride` to its right, so one broadcast 32-bit load gives the x values
// under both pixels for one (tap, channel) column of dW (an odd row's last pair uses the low half
// only). A tile of 6 such columns by 64 output channels (24 accumulators) reduces over chunks of
// 512 pixel pairs, in a fixed order: the same bits on every thread count. Any stride, dilation
// and padding; one group.
#pragma once

#include <array>
#include <vector>

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

namespace bf16 {
// Which multiply the forward pass runs on.
enum class Kernel { avx512_bf16, amx_bf16 };
}  // namespace bf16

class Bf16DirectSolver final : public StagedSolver {
 public:
  explicit Bf16DirectSolver(bf16::Kernel kernel) : kernel_(kernel) {}
  std::string_view id() const override {
    return kernel_ == bf16::Kernel::amx_bf16 ? "cpu:bf16_direct:amx_bf16"
                                             : "cpu:bf16_direct:avx512_bf16";
  }
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  bf16::Kernel kernel_;
};

namespace bf16 {
class Reader;
class Writer;
// Where the forward kernel's output row (n, i, j) lands in `out`: row (n, first[0] + i * step[0],
// first[1] + j * step[1]), pixels first[2], first[2] + step[2], ... (count of them; -1: the
// row's width). The default is the identity; a stride phase of backward-data is not.
struct RowPlacement {
  std::array<std::int64_t, 3> first{0, 0, 0}, step{1, 1, 1};
  std::int64_t count = -1;
};
struct FilterRows;
// How the forward pass of `kernel` wants pack_filter's rows for problem (or phase) G: the AMX
// kernel takes a filter row's taps as one run where they are adjacent in x (width dilation 1),
// each run padded to whole 16-row tiles.
FilterRows filter_rows(const detail::Geometry& G, Kernel kernel);
// Words of the packed filter for G with those rows.
std::int64_t packed_filter_words(const detail::Geometry& G, Kernel kernel);
// Readable words the forward pass of `kernel` needs past the last window of an x of `channels`
// read at width stride sw (AMX: its last tile's dropped pixels). Backward-data's phases are
// stride-1 passes over dy's K channels.
std::int64_t x_slack_words(std::int64_t sw, std::int64_t channels, Kernel kernel);
// The forward kernel (bf16_entry.cpp, bf16_direct_avx512.cpp, bf16_amx.cpp): y, row by row, from
// x pairs (xs: the padded sizes) and the filter packed with filter_rows(G, kernel). Each row is
// stored by the thread that computed it, while it is still in that thread's cache.
void forward(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
             const std::uint32_t* w, const Writer& out, Kernel kernel,
             const RowPlacement& at = {});
// Backward-data in stride phases (bf16_bwd_data.cpp): dy's padded pair copy (its sizes), then
// each phase's flipped sub-filter into `filter` and one forward pass. filter_words: room for the
// largest phase's filter.
Sizes5 backward_data_dy_sizes(const Problem& p);
std::int64_t backward_data_filter_words(const Problem& p, Kernel kernel);
void backward_data(const Problem& p, const ConvTensors& t, std::uint32_t* dy,
                   std::uint32_t* filter, Kernel kernel);
// Backward-weights on AMX (bf16_amx_bwdw.cpp): where the virtual pixel grid puts everything.
struct AmxBwdwLayout {
  bool per_column = false;  // a copy of x per tap column s (rows (s, c)), else one per phase
  std::int64_t copies = 1, odv = 0, ohv = 0, wv = 0;   // copies per phase; the grid's sizes
  std::vector<std::array<std::int64_t, 3>> phases;    // (depth, height, width) stride phases
  std::vector<std::int64_t> group_phase, group_offset;  // per group (tap or tap row): its
  std::vector<std::int64_t> group_x;                    // copy, offset on the grid, x offset
  std::int64_t max_offset = 0;
  std::int64_t rows = 0;                               // A rows per group (C or S * C)
  std::int64_t pixels = 0, chunks = 0, x_row = 0, x_elements = 0;
  std::int64_t kp = 0, dy_words = 0, splits = 1, block_chunks = 0, prefetch = 0, dwt_floats = 0;
};
AmxBwdwLayout amx_backward_weights_layout(const detail::Geometry& G);
// Its steps (bf16_amx_bwdw.cpp): x's copies on the grid (false on an Inf or NaN), dy's pairs.
bool copy_x_to_grid(const detail::Geometry& G, const AmxBwdwLayout& L, const Reader& x,
                    std::uint16_t* xc);
void pack_dy_to_grid(const detail::Geometry& G, const AmxBwdwLayout& L, const Reader& dy,
                     std::uint32_t* dyp);
// dW^T [taps * C][Kp] into dwt (room for layout.splits of them) through x's copies (xc:
// x_elements) and dy's pairs (dyp: dy_words); false, with nothing computed, when x holds an Inf
// or NaN (the caller then uses the AVX512_BF16 kernel).
bool backward_weights_on_amx(const detail::Geometry& G, const ConvTensors& t, std::uint16_t* xc,
                             std::uint32_t* dyp, float* dwt);
// The backward-weights kernel (bf16_entry.cpp, bf16_bwdw_avx512.cpp): dW^T [taps * C][Kp] (Kp: K
// rounded up to 16) from x as shifted pairs (xs: the padded sizes) and dy as pixel pairs.
void backward_weights(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
                      const std::uint32_t* dy, float* dwt);
}  // namespace bf16

}  // namespace convguard::cpu
