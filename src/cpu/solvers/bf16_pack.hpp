// cpu:bf16_direct's packers: the caller's bf16 tensors (any layout and strides) straight into
// the kernels' 32-bit pair layouts, with no fp32 staging copy in between (that copy moved three
// times the bytes of the bf16 input and cost as much as the kernel on 1x1 layers). Values are
// bit copies: nothing is rounded here.
#pragma once

#include <cstdint>

#include "convguard/dtype.hpp"
#include "core/geometry.hpp"
#include "core/tensor_iter.hpp"
#include "cpu/staging.hpp"

namespace convguard::cpu::bf16 {

// A bf16 tensor's elements by logical (n, c, d, h, w) (a filter: (k, c, d, h, w)).
class Reader {
 public:
  explicit Reader(const TensorView& v);
  const Sizes5& sizes() const { return s_; }
  std::uint16_t at(std::int64_t n, std::int64_t c, std::int64_t d, std::int64_t h,
                   std::int64_t w) const {
    return p_[n * st_[0] + c * st_[1] + d * st_[2] + h * st_[3] + w * st_[4]];
  }
  // Row (n, d, h) as channels-last bits [W][C].
  void row(std::int64_t n, std::int64_t d, std::int64_t h, std::uint16_t* out) const;
  const std::uint16_t* data() const { return p_; }
  const std::array<std::int64_t, 5>& strides() const { return st_; }

 private:
  const std::uint16_t* p_;
  Sizes5 s_;
  std::array<std::int64_t, 5> st_;
};

// A bf16 tensor the kernels write: fp32 results rounded to bf16 (to nearest even, as the
// staging's write-back rounds), stored with the tensor's own layout and strides.
class Writer {
 public:
  explicit Writer(const TensorView& v);
  // Row (n, d, h) from channels-last fp32 [count][C] (count = -1: the row's width), into pixels
  // w0, w0 + step, ...
  void row(std::int64_t n, std::int64_t d, std::int64_t h, const float* in, std::int64_t w0 = 0,
           std::int64_t step = 1, std::int64_t count = -1) const;

 private:
  std::uint16_t* p_;
  Sizes5 s_;
  std::array<std::int64_t, 5> st_;
};

// Pairs of adjacent channels, channels-last and zero-padded by `pad`:
// [N][D+pad][H+pad][W+pad][ceil(C/2)] (an odd C's last pair has a zero high half).
void pack_channel_pairs(const Reader& src, const Padding& pad, std::uint32_t* dst);

// Each element of the zero-padded channels-last tensor paired with the one `stride` pixels to its
// right (zero past the row's end): [N][D+pad][H+pad][W+pad][C].
void pack_shifted_pairs(const Reader& src, const Padding& pad, std::int64_t stride,
                        std::uint32_t* dst);

// Pairs of adjacent pixels of a row, channels padded with zeros to whole 16-lane vectors:
// [N][D][H][ceil(W/2)][Kp] (an odd W's last pair has a zero high half).
void pack_pixel_pairs(const Reader& src, std::int64_t kp, std::uint32_t* dst);

// Which taps of the filter a kernel pass uses, and how. Forward: all of them, as they are.
// Backward-data (one stride phase, bf16_bwd_data.cpp): taps first + step * j (j < taps) per
// dimension, in reverse order, with the filter's K and C swapped.
struct SubFilter {
  bool swap_and_flip = false;
  std::array<std::int64_t, 3> taps{1, 1, 1}, first{0, 0, 0}, step{1, 1, 1};
};

// How pack_filter groups the rows (input-channel pairs) of each 16-lane block: runs of
// `taps_per_segment` consecutive taps (their rows back to back), each run padded with zero rows
// to `segment_rows` (0: no padding). The default, one tap a segment and no padding, is the
// vdpbf16ps kernel's [taps][ceil(I/2)]; the AMX kernel takes a filter row's taps as one
// segment, padded to whole 16-row tiles (bf16_amx.hpp).
struct FilterRows {
  std::int64_t taps_per_segment = 1, segment_rows = 0;
};

// The filter as [ceil(O/16)][segments][rows][16] pairs of input channels (rows: see FilterRows;
// by default [ceil(O/16)][taps][ceil(I/2)][16]), O output channels one per lane: forward O = K,
// I = C; backward-data O = C, I = K. Lanes and channels past O and I, and padding rows, are zero.
void pack_filter(const Reader& w, const detail::Geometry& G, const SubFilter& f,
                 std::uint32_t* dst, const FilterRows& rows = {});

}  // namespace convguard::cpu::bf16
