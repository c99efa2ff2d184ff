#include "cpu/staging.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/tensor_iter.hpp"
#include "cpu/isa.hpp"
#include "cpu/transpose.hpp"

namespace convguard::cpu {

bool fast_transpose() {
  static const bool ok = __builtin_cpu_supports("avx512f") && isa_level() >= IsaLevel::avx512;
  return ok;
}

Sizes5 sizes5(const TensorDesc& t) {
  const detail::Shape5 s = detail::shape5(t);
  return {s.dims[0], s.dims[1], s.dims[2], s.dims[3], s.dims[4]};
}

Sizes5 padded(const Sizes5& s, const Padding& p) {
  return {s.n, s.c, s.d + p.begin[0] + p.end[0], s.h + p.begin[1] + p.end[1],
          s.w + p.begin[2] + p.end[2]};
}

namespace {

// Dense strides of a padded buffer in logical (n, c, d, h, w) terms.
struct Strides5 {
  std::int64_t n, c, d, h, w;
};
Strides5 packed_strides(const Sizes5& s, Order order) {
  if (order == Order::channels_first)
    return {s.c * s.d * s.h * s.w, s.d * s.h * s.w, s.h * s.w, s.w, 1};
  return {s.d * s.h * s.w * s.c, 1, s.h * s.w * s.c, s.w * s.c, s.c};
}

template <class From, class To, class Convert>
void copy_slab(const From* src, std::int64_t sc, std::int64_t sw, To* dst, std::int64_t dc,
               std::int64_t dw, std::int64_t C, std::int64_t W, Convert convert) {
  constexpr std::int64_t kB = 16;
  if constexpr (std::is_same_v<From, float> && std::is_same_v<To, float>) {
    // fp32 both sides (the conversion is the identity): a channels-first <-> channels-last
    // change is a transpose of the C x W slab.
    if (sw == 1 && dc == 1 && fast_transpose()) return transpose_f32_avx512(src, sc, dst, dw, C, W);
    if (sc == 1 && dw == 1 && fast_transpose()) return transpose_f32_avx512(src, sw, dst, dc, W, C);
  }
  if (sw == 1 && dw == 1) {
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t w = 0; w < W; ++w) dst[c * dc + w] = convert(src[c * sc + w]);
    return;
  }
  for (std::int64_t c0 = 0; c0 < C; c0 += kB)
    for (std::int64_t w0 = 0; w0 < W; w0 += kB) {
      const std::int64_t c1 = std::min(C, c0 + kB), w1 = std::min(W, w0 + kB);
      if (sc == 1 && dc == 1) {
        for (std::int64_t w = w0; w < w1; ++w)
          for (std::int64_t c = c0; c < c1; ++c)
            dst[c * dc + w * dw] = convert(src[c * sc + w * sw]);
      } else {
        for (std::int64_t c = c0; c < c1; ++c)
          for (std::int64_t w = w0; w < w1; ++w)
            dst[c * dc + w * dw] = convert(src[c * sc + w * sw]);
      }
    }
}

// A copy between the caller's tensor (elements of type T) and the padded packed fp32 buffer,
// converting each element, in slabs of 16 channels x one row. Threads take (image, 16 channels),
// not rows: a channels-first side is then read or written as 16 long sequential streams the
// prefetchers follow (by rows, each thread jumped between all C planes every row, and a 1x1
// layer's NCHW-to-NHWC staging took 2.4x its convolution, waiting on memory). bf16 and f16 take
// the same blocked path (element by element, bf16 staging on each side of cpu:bf16_direct took
// 1.2x its convolution).
template <class T, class ToFloat, class FromFloat>
void copy_tensor(const TensorDesc& t, Order order, const Padding& pad, const void* from, void* to,
                 bool to_packed, ToFloat to_float, FromFloat from_float) {
  constexpr std::int64_t kB = 16;
  const Sizes5 s = sizes5(t);
  const auto& st = detail::shape5(t).strides;
  const Strides5 ps = packed_strides(padded(s, pad), order);
  const std::int64_t cblocks = (s.c + kB - 1) / kB;
  // Without H or W padding, where the caller's rows follow each other, a plane is one row: long
  // rows are what the transposes work in (a 14-wide row is shorter than one 16 x 16 block).
  const bool flat = pad.begin[1] == 0 && pad.end[1] == 0 && pad.begin[2] == 0 && pad.end[2] == 0 &&
                    st[3] == s.w * st[4];
  const std::int64_t rows = flat ? 1 : s.h, width = flat ? s.h * s.w : s.w;
#pragma omp parallel for collapse(2) schedule(static) if (s.n * s.c * s.d * s.h * s.w >= \
                                                             kParallelFromElements)
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t cb = 0; cb < cblocks; ++cb) {
      const std::int64_t c0 = cb * kB, nc = std::min(kB, s.c - c0);
      for (std::int64_t d = 0; d < s.d; ++d)
        for (std::int64_t h = 0; h < rows; ++h) {
          const std::int64_t so = n * st[0] + c0 * st[1] + d * st[2] + h * st[3];
          const std::int64_t po = n * ps.n + c0 * ps.c + (d + pad.begin[0]) * ps.d +
                                  (h + pad.begin[1]) * ps.h + pad.begin[2] * ps.w;
          if (to_packed)
            copy_slab(static_cast<const T*>(from) + so, st[1], st[4], static_cast<float*>(to) + po,
                      ps.c, ps.w, nc, width, to_float);
          else
            copy_slab(static_cast<const float*>(from) + po, ps.c, ps.w, static_cast<T*>(to) + so,
                      st[1], st[4], nc, width, from_float);
        }
    }
}

// copy_tensor for the tensor's dtype.
void copy_any(const TensorDesc& t, Order order, const Padding& pad, const void* from, void* to,
              bool to_packed) {
  const auto same = [](float v) { return v; };
  switch (t.dtype) {
    case DType::f32:
      return copy_tensor<float>(t, order, pad, from, to, to_packed, same, same);
    case DType::bf16:
      return copy_tensor<std::uint16_t>(
          t, order, pad, from, to, to_packed, [](std::uint16_t b) { return bfloat_to_float(b); },
          [](float v) { return float_to_bfloat(v); });
    case DType::f16:
      return copy_tensor<std::uint16_t>(
          t, order, pad, from, to, to_packed, [](std::uint16_t b) { return half_to_float(b); },
          [](float v) { return float_to_half(v); });
  }
}

}  // namespace

bool is_packed_f32(const TensorDesc& t, Order order) {
  if (t.dtype != DType::f32) return false;
  const Sizes5 s = sizes5(t);
  const Strides5 ps = packed_strides(s, order);
  const detail::Shape5 sh = detail::shape5(t);
  const std::int64_t want[5] = {ps.n, ps.c, ps.d, ps.h, ps.w};
  for (int i = 0; i < 5; ++i) {
    if (sh.dims[i] > 1 && sh.strides[i] != want[i]) return false;
  }
  return true;
}

void pack(const TensorView& src, Order order, const Padding& pad, float* dst) {
  const Sizes5 ps = padded(sizes5(src.desc), pad);
  const bool has_pad = ps.elements() != src.desc.elements();
  if (has_pad) std::memset(dst, 0, static_cast<std::size_t>(ps.elements()) * sizeof(float));
  std::memset(dst + ps.elements(), 0, kOverread * sizeof(float));
  copy_any(src.desc, order, pad, src.data, dst, true);
}

void unpack(const float* src, Order order, const Padding& pad, const TensorView& dst) {
  copy_any(dst.desc, order, pad, src, dst.data, false);
}

int WorkspaceLayout::add(std::int64_t floats) {
  offsets_.push_back(total_);
  total_ += (static_cast<std::size_t>(floats) * sizeof(float) + 63) / 64 * 64;
  return static_cast<int>(offsets_.size()) - 1;
}

float* WorkspaceLayout::get(std::span<std::byte> ws, int slot) const {
  return reinterpret_cast<float*>(ws.data() + offsets_[static_cast<std::size_t>(slot)]);
}

std::int64_t column_phase_width(const Sizes5& xs, std::int64_t step) {
  return (xs.w + step - 1) / step;
}

namespace {

template <class T>
void pad_phases(const T* x, const Sizes5& s, const Padding& pad, const Sizes5& xs,
                std::int64_t step, T* to) {
  const std::int64_t q = column_phase_width(xs, step), rows = xs.d * xs.h, planes = xs.n * xs.c;
#pragma omp parallel for collapse(2) if (planes * step * rows * q >= kParallelFromElements)
  for (std::int64_t plane = 0; plane < planes; ++plane)
    for (std::int64_t ph = 0; ph < step; ++ph)
      for (std::int64_t row = 0; row < rows; ++row) {
        T* out = to + ((plane * step + ph) * rows + row) * q;
        const std::int64_t d = row / xs.h - pad.begin[0], h = row % xs.h - pad.begin[1];
        if (d < 0 || d >= s.d || h < 0 || h >= s.h) {
          std::fill(out, out + q, T{});
          continue;
        }
        const T* from = x + ((plane * s.d + d) * s.h + h) * s.w;
        if (step == 1) {  // the row as it is, between its paddings
          const std::int64_t left = pad.begin[2], count = std::min(s.w, q - left);
          std::fill(out, out + left, T{});
          std::memcpy(out + left, from, sizeof(T) * count);
          std::fill(out + left + count, out + q, T{});
          continue;
        }
        for (std::int64_t col = 0; col < q; ++col) {
          const std::int64_t w = col * step + ph - pad.begin[2];
          out[col] = w >= 0 && w < s.w ? from[w] : T{};
        }
      }
}

}  // namespace

void pad_column_phases(const float* x, const Sizes5& s, const Padding& pad, const Sizes5& xs,
                       std::int64_t step, float* to) {
  pad_phases(x, s, pad, xs, step, to);
}
void pad_column_phases(const std::uint16_t* x, const Sizes5& s, const Padding& pad,
                       const Sizes5& xs, std::int64_t step, std::uint16_t* to) {
  pad_phases(x, s, pad, xs, step, to);
}

}  // namespace convguard::cpu
