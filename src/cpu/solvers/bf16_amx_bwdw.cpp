// cpu:bf16_direct:amx_bf16's backward-weights around its kernel (bf16_amx.cpp): the virtual
// pixel grid, x's copies on it, dy's pixel pairs on it, and the fixed-order sum of the splits.
//
// dW[k][c][t][r][s] = sum over output pixels of dy[k][pixel] * x[c][pixel's window at (t, r, s)].
// AMX's A operand takes 32 consecutive bf16 values of a row at any element offset, so x is
// copied once (or once per tap column, below) onto a grid of "virtual pixels" on which every tap
// reads x at one constant offset from the output pixel's own index:
//   - each output plane gets Qd more depth planes and Qh more rows (the taps' reach past the
//     last output row, in strides), so a tap (t, r) reads plane/row od + qd, oh + qh: the offset
//     (qd * OHv + qh) * Wv; x rows at phase (t * dd mod sd, r * dh mod sh) get their own copy;
//   - at width stride 1 (with C >= 32), a virtual row is the padded x row (Wv >= OW + (S-1) dw),
//     and tap s reads at + s * dw: one copy per phase. Otherwise each tap column s gets its own
//     copy (Wv = OW, x subsampled at the stride), and a group's rows are (s, c): S * C rows, so
//     that small C (conv1: 3 channels x 7 taps = 21 rows) still fills most of a 16-row tile.
// Wv is even, so a virtual row starts on a pixel pair. dy is zero on every virtual pixel that is
// not an output pixel, and x's copies hold real x values there: were one of them Inf or NaN, 0 *
// Inf would put a NaN where the reference has none, so a copy that meets one reports it and the
// solver computes that problem on cpu:bf16_direct:avx512_bf16's kernel instead.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"

namespace convguard::cpu::bf16 {

namespace {

constexpr std::int64_t round_up(std::int64_t v, std::int64_t to) {
  return (v + to - 1) / to * to;
}

inline bool finite_bits(std::uint16_t v) {
  return (v & 0x7f80u) != 0x7f80u;
}

}  // namespace

AmxBwdwLayout amx_backward_weights_layout(const detail::Geometry& G) {
  AmxBwdwLayout L;
  const std::int64_t C = G.c(), S = G.kw;
  L.per_column = G.sw > 1 || (C < 32 && S > 1);
  L.copies = L.per_column ? S : 1;
  std::int64_t qd = 0, qh = 0;
  for (std::int64_t t = 0; t < G.kd; ++t) qd = std::max(qd, t * G.dd / G.sd);
  for (std::int64_t r = 0; r < G.kh; ++r) qh = std::max(qh, r * G.dh / G.sh);
  L.odv = G.od + qd;
  L.ohv = G.oh + qh;
  const std::int64_t width = L.per_column ? G.ow : G.ow + (S - 1) * G.dw;
  L.wv = round_up(width, 2);
  L.rows = L.per_column ? S * C : C;
  std::vector<std::int64_t> offset;
  std::int64_t max_offset = 0;
  for (std::int64_t t = 0; t < G.kd; ++t)
    for (std::int64_t r = 0; r < G.kh; ++r) {
      const std::array<std::int64_t, 2> phase{t * G.dd % G.sd, r * G.dh % G.sh};
      auto at = std::find(L.phases.begin(), L.phases.end(), phase);
      if (at == L.phases.end()) at = L.phases.insert(at, phase);
      const std::int64_t p = at - L.phases.begin();
      const std::int64_t base = ((t * G.dd / G.sd) * L.ohv + r * G.dh / G.sh) * L.wv;
      for (std::int64_t s = 0; s < (L.per_column ? 1 : S); ++s) {
        L.group_phase.push_back(p);
        offset.push_back(base + s * G.dw);
        max_offset = std::max(max_offset, offset.back());
      }
    }
  L.pixels = G.n * L.odv * L.ohv * L.wv;
  L.chunks = round_up(L.pixels, 32) / 32;
  L.x_row = round_up(L.chunks * 32 + max_offset, 32);
  for (std::size_t g = 0; g < offset.size(); ++g)
    L.group_x.push_back(L.group_phase[g] * L.copies * C * L.x_row + offset[g]);
  L.x_elements = static_cast<std::int64_t>(L.phases.size()) * L.copies * C * L.x_row;
  L.kp = padded16(G.k());
  L.dy_words = L.chunks * 16 * L.kp;
  // Splits of the reduction where there are few items, so that 16 threads have work; chosen from
  // the problem alone (never the thread count), so every thread count gives the same bits.
  const std::int64_t groups = static_cast<std::int64_t>(L.group_x.size());
  const std::int64_t items = groups * ((L.rows + 31) / 32) * ((L.kp + 31) / 32);
  while (items * L.splits < 32 && L.chunks >= 16 * L.splits * 2) L.splits *= 2;
  // A block's x (every group's rows over its pixels) should stay in L2 (1 MiB of it) while
  // every item passes over it; the accumulators are reloaded once a block.
  const std::int64_t x_rows = static_cast<std::int64_t>(L.phases.size()) * L.copies * C;
  L.block_chunks = std::clamp<std::int64_t>((std::int64_t{1} << 20) / (2 * x_rows) / 32, 4, 1024);
  L.dwt_floats = G.taps() * C * L.kp;
  return L;
}

bool backward_weights_on_amx(const detail::Geometry& G, const ConvTensors& t, std::uint16_t* xc,
                             std::uint32_t* dyp, float* dwt) {
  const AmxBwdwLayout L = amx_backward_weights_layout(G);
  const Reader x(t.x), dy(t.y);
  const std::int64_t C = G.c(), K = G.k(), kp = L.kp, wv = L.wv;
  const std::int64_t phases = static_cast<std::int64_t>(L.phases.size());
  const auto& xst = x.strides();
  const std::int64_t plane_rows = G.n * L.odv * L.ohv;
  // x's copies: one virtual row (phase, copy, channel, n, od', oh') at a time.
  bool finite = true;
  const std::int64_t rows = phases * L.copies * C * plane_rows;
#pragma omp parallel for schedule(static) reduction(&& : finite)
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t oh = i % L.ohv, od = i / L.ohv % L.odv, n = i / (L.ohv * L.odv) % G.n;
    const std::int64_t c = i / plane_rows % C, j = i / (plane_rows * C) % L.copies;
    const std::int64_t p = i / (plane_rows * C * L.copies);
    std::uint16_t* dst = xc + ((p * L.copies + j) * C + c) * L.x_row + (i % plane_rows) * wv;
    const std::int64_t id = od * G.sd + L.phases[p][0] - G.pd;
    const std::int64_t ih = oh * G.sh + L.phases[p][1] - G.ph;
    if (id < 0 || id >= G.id || ih < 0 || ih >= G.ih) {
      std::memset(dst, 0, static_cast<std::size_t>(wv) * 2);
      continue;
    }
    const std::uint16_t* row = x.data() + n * xst[0] + c * xst[1] + id * xst[2] + ih * xst[3];
    const std::int64_t w0 = j * G.dw - G.pw;  // the x column under virtual column 0
    if (G.sw == 1 && xst[4] == 1) {
      const std::int64_t lo = std::clamp<std::int64_t>(-w0, 0, wv);
      const std::int64_t hi = std::clamp<std::int64_t>(G.iw - w0, lo, wv);
      std::memset(dst, 0, static_cast<std::size_t>(lo) * 2);
      std::memcpy(dst + lo, row + (w0 + lo), static_cast<std::size_t>(hi - lo) * 2);
      std::memset(dst + hi, 0, static_cast<std::size_t>(wv - hi) * 2);
    } else {
      for (std::int64_t w = 0; w < wv; ++w) {
        const std::int64_t iw = w * G.sw + w0;
        dst[w] = iw >= 0 && iw < G.iw ? row[iw * xst[4]] : std::uint16_t{0};
      }
    }
    bool ok = true;
    for (std::int64_t w = 0; w < wv; ++w) ok &= finite_bits(dst[w]);
    finite = finite && ok;
  }
  if (!finite) return false;
  // Past the last plane: zeros (the last steps and the largest offset read there).
  const std::int64_t used = plane_rows * wv;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < phases * L.copies * C; ++r)
    std::memset(xc + r * L.x_row + used, 0, static_cast<std::size_t>(L.x_row - used) * 2);
  // dy as pixel pairs on the same grid, zero off the output pixels and past K.
  const auto& dst_ = dy.strides();
  const std::int64_t kblocks = kp / 16, half = wv / 2, out_pairs = (G.ow + 1) / 2;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < plane_rows * kblocks; ++i) {
    const std::int64_t kb = i % kblocks, v = i / kblocks;
    const std::int64_t oh = v % L.ohv, od = v / L.ohv % L.odv, n = v / (L.ohv * L.odv);
    std::uint32_t* dst = dyp + v * half * kp + kb * 16;
    std::int64_t done = 0;
    if (od < G.od && oh < G.oh) {
      const std::int64_t k0 = kb * 16, real = std::min<std::int64_t>(16, K - k0);
      const std::uint16_t* src = dy.data() + n * dst_[0] + k0 * dst_[1] + od * dst_[2] + oh * dst_[3];
      if (dst_[4] == 1) {
        transpose_pairs_avx512(src, dst_[1], real, G.ow, dst, kp);
      } else {
        for (std::int64_t q = 0; q < out_pairs; ++q)
          for (std::int64_t k = 0; k < 16; ++k) {
            std::uint32_t lo = 0, hi = 0;
            if (k < real) {
              lo = src[k * dst_[1] + 2 * q * dst_[4]];
              if (2 * q + 1 < G.ow) hi = src[k * dst_[1] + (2 * q + 1) * dst_[4]];
            }
            dst[q * kp + k] = lo | hi << 16;
          }
      }
      done = out_pairs;
    }
    for (std::int64_t q = done; q < half; ++q) std::memset(dst + q * kp, 0, 64);
  }
  std::memset(dyp + plane_rows * half * kp, 0,
              static_cast<std::size_t>(L.dy_words - plane_rows * half * kp) * 4);
  AmxBackwardWeightsArgs a{};
  a.x = xc;
  a.x_row = L.x_row;
  a.group_x = L.group_x.data();
  a.groups = static_cast<std::int64_t>(L.group_x.size());
  a.rows = L.rows;
  a.dy = dyp;
  a.kp = kp;
  a.chunks = L.chunks;
  a.splits = L.splits;
  a.block_chunks = L.block_chunks;
  a.dwt = dwt;
  backward_weights_amx(a);
  // The splits' sums added in split order.
  if (L.splits > 1) {
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < L.dwt_floats; ++e)
      for (std::int64_t s = 1; s < L.splits; ++s) dwt[e] += dwt[s * L.dwt_floats + e];
  }
  return true;
}

}  // namespace convguard::cpu::bf16
