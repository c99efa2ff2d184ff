#include "cpu/solvers/bf16_pack.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bf16_kernels.hpp"

namespace convguard::cpu::bf16 {

Reader::Reader(const TensorView& v)
    : p_(static_cast<const std::uint16_t*>(v.data)),
      s_(sizes5(v.desc)),
      st_(detail::shape5(v.desc).strides) {}

void Reader::row(std::int64_t n, std::int64_t d, std::int64_t h, std::uint16_t* out) const {
  const std::uint16_t* src = p_ + n * st_[0] + d * st_[2] + h * st_[3];
  const std::int64_t C = s_.c, W = s_.w, sc = st_[1], sw = st_[4];
  if (sc == 1) {
    if (sw == C) {  // a dense channels-last row is already the result
      std::memcpy(out, src, static_cast<std::size_t>(W * C) * sizeof(std::uint16_t));
      return;
    }
    for (std::int64_t w = 0; w < W; ++w)
      for (std::int64_t c = 0; c < C; ++c) out[w * C + c] = src[w * sw + c];
    return;
  }
  load_bf16_rows_avx512(src, sc, sw, W, C, out);
}

Writer::Writer(const TensorView& v)
    : p_(static_cast<std::uint16_t*>(v.data)),
      s_(sizes5(v.desc)),
      st_(detail::shape5(v.desc).strides) {}

void Writer::row(std::int64_t n, std::int64_t d, std::int64_t h, const float* in, std::int64_t w0,
                 std::int64_t step, std::int64_t count) const {
  std::uint16_t* dst = p_ + n * st_[0] + d * st_[2] + h * st_[3] + w0 * st_[4];
  store_bf16_avx512(in, s_.c, count < 0 ? s_.w : count, s_.c, dst, st_[1], st_[4] * step);
}

namespace {

// Calls make(row_bits, out) for every row (n, d, h) of the tensor padded by `pad`, where
// row_bits is that row channels-last with its W padding (all zeros in a padding row) and out
// points `out_row` 32-bit words into dst per row. Rows are spread over the threads.
template <class Make>
void for_each_padded_row(const Reader& src, const Padding& pad, std::uint32_t* dst,
                         std::int64_t out_row, Make make) {
  const Sizes5 s = src.sizes(), ps = padded(s, pad);
  const std::int64_t C = s.c;
#pragma omp parallel
  {
    std::vector<std::uint16_t> row(static_cast<std::size_t>(ps.w * C));
#pragma omp for collapse(3) schedule(static)
    for (std::int64_t n = 0; n < ps.n; ++n)
      for (std::int64_t d = 0; d < ps.d; ++d)
        for (std::int64_t h = 0; h < ps.h; ++h) {
          const std::int64_t sd = d - pad.begin[0], sh = h - pad.begin[1];
          std::fill(row.begin(), row.end(), std::uint16_t{0});
          if (sd >= 0 && sd < s.d && sh >= 0 && sh < s.h)
            src.row(n, sd, sh, row.data() + pad.begin[2] * C);
          make(row.data(), dst + ((n * ps.d + d) * ps.h + h) * out_row);
        }
  }
}

}  // namespace

void pack_channel_pairs(const Reader& src, const Padding& pad, std::uint32_t* dst) {
  const std::int64_t C = src.sizes().c, C2 = pairs(C), W = padded(src.sizes(), pad).w;
  if (C % 2 == 0) {
    // An even C's pairs are the channels-last row's bits as they are: each row is read straight
    // into place (no row copy, no pairing pass: those took longer than the AMX kernel on 1x1
    // layers), and only the padding is zeroed.
    const Sizes5 s = src.sizes(), ps = padded(s, pad);
#pragma omp parallel for collapse(3) schedule(static)
    for (std::int64_t n = 0; n < ps.n; ++n)
      for (std::int64_t d = 0; d < ps.d; ++d)
        for (std::int64_t h = 0; h < ps.h; ++h) {
          auto* out = reinterpret_cast<std::uint16_t*>(dst + ((n * ps.d + d) * ps.h + h) * W * C2);
          const std::int64_t sd = d - pad.begin[0], sh = h - pad.begin[1];
          if (sd < 0 || sd >= s.d || sh < 0 || sh >= s.h) {
            std::fill(out, out + W * C, std::uint16_t{0});
            continue;
          }
          const std::int64_t left = pad.begin[2] * C, right = (pad.begin[2] + s.w) * C;
          std::fill(out, out + left, std::uint16_t{0});
          src.row(n, sd, sh, out + left);
          std::fill(out + right, out + W * C, std::uint16_t{0});
        }
    return;
  }
  for_each_padded_row(src, pad, dst, W * C2, [&](const std::uint16_t* row, std::uint32_t* out) {
    for (std::int64_t w = 0; w < W; ++w)
      for (std::int64_t c2 = 0; c2 < C2; ++c2) {
        const std::uint32_t hi = 2 * c2 + 1 < C ? row[w * C + 2 * c2 + 1] : 0u;
        out[w * C2 + c2] = row[w * C + 2 * c2] | hi << 16;
      }
  });
}

void pack_shifted_pairs(const Reader& src, const Padding& pad, std::int64_t stride,
                        std::uint32_t* dst) {
  const std::int64_t C = src.sizes().c, W = padded(src.sizes(), pad).w;
  for_each_padded_row(src, pad, dst, W * C, [&](const std::uint16_t* row, std::uint32_t* out) {
    for (std::int64_t w = 0; w < W; ++w) {
      const std::uint16_t* right = w + stride < W ? row + (w + stride) * C : nullptr;
      for (std::int64_t c = 0; c < C; ++c)
        out[w * C + c] = row[w * C + c] | (right ? std::uint32_t{right[c]} << 16 : 0u);
    }
  });
}

void pack_pixel_pairs(const Reader& src, std::int64_t kp, std::uint32_t* dst) {
  const std::int64_t K = src.sizes().c, W = src.sizes().w, W2 = pairs(W);
  for_each_padded_row(src, Padding{}, dst, W2 * kp,
                      [&](const std::uint16_t* row, std::uint32_t* out) {
                        for (std::int64_t m = 0; m < W2; ++m) {
                          const std::uint16_t* lo = row + 2 * m * K;
                          const std::uint16_t* hi = 2 * m + 1 < W ? lo + K : nullptr;
                          std::uint32_t* o = out + m * kp;
                          for (std::int64_t k = 0; k < K; ++k)
                            o[k] = lo[k] | (hi ? std::uint32_t{hi[k]} << 16 : 0u);
                          std::fill(o + K, o + kp, 0u);
                        }
                      });
}

void pack_filter(const Reader& w, const detail::Geometry& G, const SubFilter& f,
                 std::uint32_t* dst, const FilterRows& rows) {
  const bool bwd = f.swap_and_flip;
  const std::int64_t K = G.k(), C = G.c(), taps = f.taps[0] * f.taps[1] * f.taps[2];
  const std::int64_t O = bwd ? C : K, I = bwd ? K : C, I2 = pairs(I);
  const auto& st = w.strides();
  // Strides of the kernel's output and input channels in the filter ([K][C][kd][kh][kw]).
  const std::int64_t o_stride = bwd ? st[1] : st[0], i_stride = bwd ? st[0] : st[1];
  // The filter's index along dimension d of the kernel's tap j, and each tap's element offset.
  const auto source = [&](int d, std::int64_t j) {
    return f.first[d] + f.step[d] * (bwd ? f.taps[d] - 1 - j : j);
  };
  std::vector<std::int64_t> tap_at;
  for (std::int64_t a = 0; a < f.taps[0]; ++a)
    for (std::int64_t b = 0; b < f.taps[1]; ++b)
      for (std::int64_t e = 0; e < f.taps[2]; ++e)
        tap_at.push_back(source(0, a) * st[2] + source(1, b) * st[3] + source(2, e) * st[4]);
  const std::int64_t blocks = blocks16(O), per = rows.taps_per_segment;
  const std::int64_t segment_rows = rows.segment_rows ? rows.segment_rows : per * I2;
  const std::int64_t segments = taps / per;
  // Two passes. First each output channel's filter taps as rows of input-channel pairs,
  // rows[o][q][ceil(I/2)], reading the filter in its own order (one output channel's elements
  // lie together in every layout the caller may pass); then each 16 x 16 block of (output
  // channel, pair) words transposed in registers into place, kernel tap t from row row_of[t]. One
  // pass reading 16 output channels' scattered elements per packed line took 0.8-1.3 ms on
  // res5's 512 x 512 x 3 x 3 filter, half the AMX kernel's time.
  //   Dense taps (the filter's taps adjacent, [..][kd][kh][kw] with kw innermost) and an even I:
  // rows q are all of the filter's taps, in its order, transposed from [I][taps] 16 x 16 blocks
  // at a time (a kernel tap is the filter tap tap_at[t], flipped or a stride phase's alike).
  // Input channels adjacent (channels-last) and an even I: each tap's row is a copy. Else one
  // element at a time.
  const Sizes5 fs = w.sizes();
  const bool even = I % 2 == 0;
  // (A dimension of size 1 has any stride: shape5 gives a 2D filter's depth stride 0.)
  const bool dense_taps = even && (fs.w == 1 || st[4] == 1) && (fs.h == 1 || st[3] == fs.w) &&
                          (fs.d == 1 || st[2] == fs.h * fs.w);
  const std::int64_t Q = dense_taps ? fs.d * fs.h * fs.w : taps;
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(taps));
  for (std::int64_t t = 0; t < taps; ++t) row_of[t] = dense_taps ? tap_at[t] : t;
  struct FilterWords;
  std::uint32_t* words =
      reusable_scratch<FilterWords, std::uint32_t>(static_cast<std::size_t>(O * Q * I2));
#pragma omp parallel for schedule(static)
  for (std::int64_t o = 0; o < O; ++o) {
    const std::uint16_t* src = w.data() + o * o_stride;
    std::uint32_t* out = words + o * Q * I2;
    if (dense_taps) {
      load_bf16_rows_avx512(src, i_stride, 1, Q, I, reinterpret_cast<std::uint16_t*>(out));
      continue;
    }
    for (std::int64_t tap = 0; tap < taps; ++tap) {
      const std::uint16_t* at = src + tap_at[tap];
      std::uint32_t* row = out + tap * I2;
      if (even && i_stride == 1) {
        std::memcpy(row, at, static_cast<std::size_t>(I) * sizeof(std::uint16_t));
        continue;
      }
      for (std::int64_t i2 = 0; i2 < I2; ++i2) {
        const std::int64_t i = 2 * i2;
        const std::uint32_t hi = i + 1 < I ? at[(i + 1) * i_stride] : 0u;
        row[i2] = at[i * i_stride] | hi << 16;
      }
    }
  }
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t ob = 0; ob < blocks; ++ob)
    for (std::int64_t tap = 0; tap < taps; ++tap) {
      std::uint32_t* segment = dst + (ob * segments + tap / per) * segment_rows * 16;
      std::uint32_t* dt = segment + tap % per * I2 * 16;
      if (tap % per == per - 1)  // the segment's padding rows
        for (std::int64_t i = per * I2 * 16; i < segment_rows * 16; ++i) segment[i] = 0;
      const std::int64_t lanes = std::min<std::int64_t>(16, O - ob * 16);
      for (std::int64_t i2 = 0; i2 < I2; i2 += 16)
        transpose_words_avx512(words + (ob * 16 * Q + row_of[tap]) * I2 + i2, Q * I2, lanes,
                               std::min<std::int64_t>(16, I2 - i2), dt + i2 * 16, 16);
    }
}

}  // namespace convguard::cpu::bf16
