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
//   - the width the same way (with C >= 32): Qw more columns, tap s reads at + s * dw / sw in
//     the copy of its column phase s * dw mod sw (at stride 1, one copy: the padded x row). With
//     C < 32 each tap column s gets its own copy instead (Wv = OW, x subsampled at the stride),
//     and a group's rows are (s, c): S * C rows, so that small C (conv1: 3 channels x 7 taps =
//     21 rows) still fills most of a 16-row tile.
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
#include "cpu/staged_solver.hpp"

namespace convguard::cpu::bf16 {

namespace {

constexpr std::int64_t round_up(std::int64_t v, std::int64_t to) {
  return (v + to - 1) / to * to;
}

}  // namespace

AmxBwdwLayout amx_backward_weights_layout(const detail::Geometry& G) {
  AmxBwdwLayout L;
  const std::int64_t C = G.c(), S = G.kw;
  L.per_column = C < 32 && S > 1;
  L.copies = L.per_column ? S : 1;
  std::int64_t qd = 0, qh = 0, qw = 0;
  for (std::int64_t t = 0; t < G.kd; ++t) qd = std::max(qd, t * G.dd / G.sd);
  for (std::int64_t r = 0; r < G.kh; ++r) qh = std::max(qh, r * G.dh / G.sh);
  if (!L.per_column)
    for (std::int64_t s = 0; s < S; ++s) qw = std::max(qw, s * G.dw / G.sw);
  L.odv = G.od + qd;
  L.ohv = G.oh + qh;
  L.wv = round_up(G.ow + qw, 2);
  L.rows = L.per_column ? S * C : C;
  std::int64_t max_offset = 0;
  for (std::int64_t t = 0; t < G.kd; ++t)
    for (std::int64_t r = 0; r < G.kh; ++r)
      for (std::int64_t s = 0; s < (L.per_column ? 1 : S); ++s) {
        const std::array<std::int64_t, 3> phase{t * G.dd % G.sd, r * G.dh % G.sh,
                                                L.per_column ? 0 : s * G.dw % G.sw};
        auto at = std::find(L.phases.begin(), L.phases.end(), phase);
        if (at == L.phases.end()) at = L.phases.insert(at, phase);
        L.group_phase.push_back(at - L.phases.begin());
        L.group_offset.push_back(((t * G.dd / G.sd) * L.ohv + r * G.dh / G.sh) * L.wv +
                         (L.per_column ? 0 : s * G.dw / G.sw));
        max_offset = std::max(max_offset, L.group_offset.back());
      }
  L.pixels = G.n * L.odv * L.ohv * L.wv;
  L.chunks = round_up(L.pixels, 32) / 32;
  // Rows an odd number of cache lines apart: a tile's 16 rows then fall in 16 L1 sets (a pitch
  // of a power of two's multiple put them in 2-4).
  L.x_row = round_up(L.chunks * 32 + max_offset, 32);
  if (L.x_row / 32 % 2 == 0) L.x_row += 32;
  L.max_offset = max_offset;
  for (std::size_t g = 0; g < L.group_offset.size(); ++g)
    L.group_x.push_back(L.group_phase[g] * L.copies * C * L.x_row + L.group_offset[g]);
  L.x_elements = static_cast<std::int64_t>(L.phases.size()) * L.copies * C * L.x_row;
  L.kp = padded16(G.k());
  L.dy_words = L.chunks * 16 * round_up(G.k(), 32);
  // Splits of the reduction where there are few items, so that 16 threads have work; chosen from
  // the problem alone (never the thread count), so every thread count gives the same bits.
  const std::int64_t groups = static_cast<std::int64_t>(L.group_x.size());
  const std::int64_t items = groups * ((L.rows + 31) / 32) * ((L.kp + 31) / 32);
  while (items * L.splits < 32 && L.chunks >= 16 * L.splits * 2) L.splits *= 2;
  // As many splits as ranges of ceil(chunks / splits) steps have steps: 517 steps in 32 splits
  // of 17 leave the last one none, whose dW^T would be summed unwritten.
  const std::int64_t per_split = (L.chunks + L.splits - 1) / L.splits;
  L.splits = (L.chunks + per_split - 1) / per_split;
  // Pixels per block, after the reloading of the accumulators (8 KiB an item a block) and the
  // reuse of a block's x and dy from L2: 128 steps (4096 pixels) were the best or near it on
  // every ResNet-50 layer (docs/perf/2026-12-01-session26-emr, calls 1-3: 8 to 1024 steps;
  // smaller blocks lost although their x and dy would stay in L1). x rows prefetched 2 steps
  // ahead: 1.2-1.5x faster kernels (call 2).
  L.block_chunks = 128;
  L.prefetch = 2;
  L.dwt_floats = G.taps() * C * L.kp;
  return L;
}

bool copy_x_to_grid(const detail::Geometry& G, const AmxBwdwLayout& L, const Reader& x,
                    std::uint16_t* xc) {
  const std::int64_t C = G.c(), wv = L.wv;
  const std::int64_t phases = static_cast<std::int64_t>(L.phases.size());
  const auto& st = x.strides();
  const std::int64_t planes = G.n * L.odv, plane = L.ohv * wv;
  // Per copy (phase p, column j), the virtual columns [lo, hi) that are x columns (w * sw + w0),
  // the rest padding.
  std::vector<std::array<std::int64_t, 3>> columns;
  for (std::int64_t e = 0; e < phases * L.copies; ++e) {
    const std::int64_t w0 = e % L.copies * G.dw + L.phases[e / L.copies][2] - G.pw;
    const std::int64_t lo = std::clamp<std::int64_t>((-w0 + G.sw - 1) / G.sw, 0, wv);
    const std::int64_t hi = std::clamp<std::int64_t>((G.iw - w0 + G.sw - 1) / G.sw, lo, wv);
    columns.push_back({w0, lo, hi});
  }
  bool finite = true;
  // One (phase, channel, n, od') plane of OHv virtual rows at a time, every copy of it while its
  // x rows are in L1 (copies outermost read x from memory once per tap column).
  const std::int64_t count = phases * C * planes;
#pragma omp parallel for schedule(static) reduction(&& : finite)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t od = i % L.odv, n = i / L.odv % G.n, c = i / planes % C;
    const std::int64_t p = i / (planes * C);
    const std::int64_t id = od * G.sd + L.phases[p][0] - G.pd;
    const std::uint16_t* base = x.data() + n * st[0] + c * st[1] + id * st[2];
    unsigned bad = 0;
    for (std::int64_t j = 0; j < L.copies; ++j) {
      std::uint16_t* const first =
          xc + ((p * L.copies + j) * C + c) * L.x_row + (n * L.odv + od) * plane;
      if (id < 0 || id >= G.id) {
        std::memset(first, 0, static_cast<std::size_t>(plane) * 2);
        continue;
      }
      const auto [w0, lo, hi] = columns[static_cast<std::size_t>(p * L.copies + j)];
      std::uint16_t* dst = first;
      for (std::int64_t oh = 0; oh < L.ohv; ++oh, dst += wv) {
        const std::int64_t ih = oh * G.sh + L.phases[p][1] - G.ph;
        if (ih < 0 || ih >= G.ih) {
          std::memset(dst, 0, static_cast<std::size_t>(wv) * 2);
          continue;
        }
        const std::uint16_t* row = base + ih * st[3];
        std::memset(dst, 0, static_cast<std::size_t>(lo) * 2);
        if (G.sw == 1 && st[4] == 1) {
          std::memcpy(dst + lo, row + (w0 + lo), static_cast<std::size_t>(hi - lo) * 2);
        } else if (G.sw == 2 && st[4] == 1) {  // a constant stride, which the compiler vectorizes
          const std::uint16_t* from = row + w0;
          for (std::int64_t w = lo; w < hi; ++w) dst[w] = from[2 * w];
        } else {
          const std::int64_t step = G.sw * st[4];
          const std::uint16_t* from = row + (lo * G.sw + w0) * st[4];
          for (std::int64_t w = lo; w < hi; ++w, from += step) dst[w] = *from;
        }
        std::memset(dst + hi, 0, static_cast<std::size_t>(wv - hi) * 2);
      }
      // Any Inf or NaN in the plane just written (exponent bits all ones).
      for (std::int64_t e = 0; e < plane; ++e) bad |= (first[e] & 0x7f80u) == 0x7f80u;
    }
    finite = finite && bad == 0;
  }
  if (!finite) return false;
  // Past the last plane: zeros (the last steps and the largest offset read there).
  const std::int64_t used = planes * plane;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < phases * L.copies * C; ++r)
    std::memset(xc + r * L.x_row + used, 0, static_cast<std::size_t>(L.x_row - used) * 2);
  return true;
}

void pack_dy_to_grid(const detail::Geometry& G, const AmxBwdwLayout& L, const Reader& dy,
                     std::uint32_t* dyp) {
  const std::int64_t K = G.k(), half = L.wv / 2, out_pairs = (G.ow + 1) / 2;
  const std::int64_t block = L.chunks * 16 * 32;  // words of one 32-channel block
  const std::int64_t kb16 = blocks16(K), planes = G.n * L.odv;
  const auto& st = dy.strides();
  // One (n, od', 16 channels) plane of OHv virtual rows at a time, zero off the output pixels
  // and past K.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < planes * kb16; ++i) {
    const std::int64_t kb = i % kb16, v = i / kb16, od = v % L.odv, n = v / L.odv;
    std::uint32_t* dst = dyp + (kb / 2) * block + v * L.ohv * half * 32 + kb % 2 * 16;
    const std::int64_t k0 = kb * 16, real = std::min<std::int64_t>(16, K - k0);
    for (std::int64_t oh = 0; oh < L.ohv; ++oh, dst += half * 32) {
      std::int64_t done = 0;
      if (od < G.od && oh < G.oh) {
        const std::uint16_t* src = dy.data() + n * st[0] + k0 * st[1] + od * st[2] + oh * st[3];
        if (st[4] == 1) {
          transpose_pairs_avx512(src, st[1], real, G.ow, dst, 32);
        } else {
          for (std::int64_t q = 0; q < out_pairs; ++q)
            for (std::int64_t k = 0; k < 16; ++k) {
              std::uint32_t lo = 0, hi = 0;
              if (k < real) {
                lo = src[k * st[1] + 2 * q * st[4]];
                if (2 * q + 1 < G.ow) hi = src[k * st[1] + (2 * q + 1) * st[4]];
              }
              dst[q * 32 + k] = lo | hi << 16;
            }
        }
        done = out_pairs;
      }
      for (std::int64_t q = done; q < half; ++q) std::memset(dst + q * 32, 0, 64);
    }
  }
  // Past the last plane, in every block: zeros.
  const std::int64_t used = planes * L.ohv * half * 32;
  for (std::int64_t b = 0; b < (kb16 + 1) / 2; ++b)
    std::memset(dyp + b * block + used, 0, static_cast<std::size_t>(block - used) * 4);
}

bool backward_weights_on_amx(const detail::Geometry& G, const ConvTensors& t, std::uint16_t* xc,
                             std::uint32_t* dyp, float* dwt) {
  const AmxBwdwLayout L = amx_backward_weights_layout(G);
  if (!copy_x_to_grid(G, L, Reader(t.x), xc)) return false;
  pack_dy_to_grid(G, L, Reader(t.y), dyp);
  AmxBackwardWeightsArgs a{};
  a.x = xc;
  a.x_row = L.x_row;
  a.group_x = L.group_x.data();
  a.groups = static_cast<std::int64_t>(L.group_x.size());
  a.rows = L.rows;
  a.dy = dyp;
  a.kp = L.kp;
  a.chunks = L.chunks;
  a.splits = L.splits;
  a.block_chunks = L.block_chunks;
  a.prefetch = L.prefetch;
  a.dwt = dwt;
  backward_weights_amx(a);
  // The splits' sums added in split order (each element read before it is written).
  if (L.splits > 1) add_partials_in_order(dwt, L.splits, L.dwt_floats, dwt, nullptr);
  return true;
}

}  // namespace convguard::cpu::bf16
