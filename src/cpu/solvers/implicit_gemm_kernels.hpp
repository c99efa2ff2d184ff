// Register-tiled kernels of cpu:implicit_gemm, generic over the vector width W (floats).
// Included only by the per-ISA files implicit_gemm_avx512.cpp / implicit_gemm_avx2.cpp, which
// are compiled with that ISA's flags (a target attribute would not reach the loops OpenMP
// outlines). Everything here has internal linkage and avoids library templates, so no
// ISA-specific copy of a shared inline function can leak into the rest of the program.
#pragma once

#include <cstdint>
#include <cstring>

#include "cpu/solvers/implicit_gemm_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::igemm {
namespace {

using simd::broadcast;
using simd::lesser;
using simd::load;
using simd::Vec;

using detail::Geometry;
// Pixels (channels, for backward-weights) per register tile: 12 x 2 vectors uses 24 of AVX-512's
// 32 registers, 6 x 2 uses 12 of AVX2's 16.
template <int W>
inline constexpr int kTileRows = W == 16 ? 12 : 6;
// Pixel blocks that share one pass over a weight panel (keeps the panel in L2).
inline constexpr std::int64_t kBlocksPerChunk = 8;

// out[m][0..2W) = sum over taps t and depth d of rows[t][m][d] * b[t][d][0..2W)
template <int W>
[[gnu::always_inline]] inline void gemm_tile(const float* const* rows, std::int64_t taps,
                                             std::int64_t depth, const float* b, float* out,
                                             std::int64_t ldo, int mvalid, int nvalid) {
  using vf = typename Vec<W>::type;
  constexpr int NR = 2 * W;
  constexpr int kMR = kTileRows<W>;
  vf acc0[kMR], acc1[kMR];
  for (int m = 0; m < kMR; ++m) acc0[m] = acc1[m] = vf{};
  for (std::int64_t t = 0; t < taps; ++t) {
    const float* rp[kMR];
    for (int m = 0; m < kMR; ++m) rp[m] = rows[t * kMR + m];
    const float* bt = b + t * depth * NR;
    for (std::int64_t d = 0; d < depth; ++d) {
      const vf b0 = load<W>(bt + d * NR), b1 = load<W>(bt + d * NR + W);
      for (int m = 0; m < kMR; ++m) {
        const vf a = broadcast<W>(rp[m] + d);
        acc0[m] += a * b0;
        acc1[m] += a * b1;
      }
    }
  }
  for (int m = 0; m < mvalid; ++m) {
    float tmp[NR];
    std::memcpy(tmp, &acc0[m], sizeof(vf));
    std::memcpy(tmp + W, &acc1[m], sizeof(vf));
    std::memcpy(out + m * ldo, tmp, static_cast<std::size_t>(nvalid) * sizeof(float));
  }
}

// Pixel p of a (n, d, h, w) grid.
struct Pixel {
  std::int64_t n, d, h, w;
};
inline Pixel decode(std::int64_t p, std::int64_t D, std::int64_t H, std::int64_t Wd) {
  Pixel x;
  x.w = p % Wd;
  p /= Wd;
  x.h = p % H;
  p /= H;
  x.d = p % D;
  x.n = p / D;
  return x;
}

// Weights as panels [g][block][t][depth][2W]: forward blocks output channels (depth = c),
// backward-data blocks input channels (depth = k). Zero beyond the last channel.
template <int W>
void pack_panels(const Geometry& G, const float* w, float* out, bool forward) {
  constexpr int NR = 2 * W;
  const std::int64_t width = forward ? G.kg : G.cg, depth = forward ? G.cg : G.kg;
  const std::int64_t blocks = (width + NR - 1) / NR, taps = G.taps();
#pragma omp parallel for collapse(2)
  for (std::int64_t g = 0; g < G.g; ++g)
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t t = 0; t < taps; ++t)
        for (std::int64_t d = 0; d < depth; ++d)
          for (int j = 0; j < NR; ++j) {
            const std::int64_t col = b * NR + j;
            float v = 0.f;
            if (col < width) {
              const std::int64_t k = g * G.kg + (forward ? col : d), c = forward ? d : col;
              v = w[(k * G.cg + c) * taps + t];
            }
            out[(((g * blocks + b) * taps + t) * depth + d) * NR + j] = v;
          }
}

// Forward (forward = true) or backward-data through gemm_tile with a row-pointer table. Work is
// split in chunks of pixel blocks; each chunk builds its pointer tables once, then passes over
// the weight panels block by block, so a panel is reused by every pixel block of the chunk.
template <int W>
void forward_or_backward_data(const Geometry& G, const StagedTensors& ts, const float* panels,
                              const float* zero, bool forward) {
  constexpr int NR = 2 * W;
  constexpr int kMR = kTileRows<W>;
  const std::int64_t taps = G.taps();
  // Pixels of the output GEMM rows (output pixels forward, input pixels backward-data).
  const std::int64_t PD = forward ? G.od : G.id, PH = forward ? G.oh : G.ih,
                     PW = forward ? G.ow : G.iw;
  const std::int64_t P = G.n * PD * PH * PW;
  const std::int64_t width = forward ? G.kg : G.cg, depth = forward ? G.cg : G.kg;
  const std::int64_t blocks = (width + NR - 1) / NR, pblocks = (P + kMR - 1) / kMR;
  const std::int64_t chunks = (pblocks + kBlocksPerChunk - 1) / kBlocksPerChunk;
  const std::int64_t ld_out = forward ? G.k() : G.c(), ld_in = forward ? G.c() : G.k();
  const std::int64_t QD = forward ? G.id : G.od, QH = forward ? G.ih : G.oh,
                     QW = forward ? G.iw : G.ow;
  const float* in = forward ? ts.x : ts.y;
  float* out = forward ? ts.y : ts.x;
#pragma omp parallel
  {
    const float** rows = new const float*[static_cast<std::size_t>(kBlocksPerChunk * taps * kMR)];
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t g = 0; g < G.g; ++g)
      for (std::int64_t ch = 0; ch < chunks; ++ch) {
        const std::int64_t pb0 = ch * kBlocksPerChunk, npb = lesser(kBlocksPerChunk, pblocks - pb0);
        for (std::int64_t j = 0; j < npb; ++j)
          for (int m = 0; m < kMR; ++m) {
            const Pixel px = decode(lesser((pb0 + j) * kMR + m, P - 1), PD, PH, PW);
            const float** r = rows + j * taps * kMR;
            std::int64_t t = 0;
            for (std::int64_t a = 0; a < G.kd; ++a)
              for (std::int64_t b = 0; b < G.kh; ++b)
                for (std::int64_t e = 0; e < G.kw; ++e, ++t) {
                  std::int64_t qd, qh, qw;
                  bool ok;
                  if (forward) {
                    qd = px.d * G.sd - G.pd + a * G.dd;
                    qh = px.h * G.sh - G.ph + b * G.dh;
                    qw = px.w * G.sw - G.pw + e * G.dw;
                    ok = qd >= 0 && qd < G.id && qh >= 0 && qh < G.ih && qw >= 0 && qw < G.iw;
                  } else {
                    const std::int64_t td = px.d + G.pd - a * G.dd, th = px.h + G.ph - b * G.dh,
                                       tw = px.w + G.pw - e * G.dw;
                    ok = td >= 0 && th >= 0 && tw >= 0 && td % G.sd == 0 && th % G.sh == 0 &&
                         tw % G.sw == 0;
                    qd = td / G.sd;
                    qh = th / G.sh;
                    qw = tw / G.sw;
                    ok = ok && qd < G.od && qh < G.oh && qw < G.ow;
                  }
                  r[t * kMR + m] =
                      ok ? in + (((px.n * QD + qd) * QH + qh) * QW + qw) * ld_in + g * depth : zero;
                }
          }
        for (std::int64_t b = 0; b < blocks; ++b) {
          const float* panel = panels + ((g * blocks + b) * taps) * depth * NR;
          const int nvalid = static_cast<int>(lesser(NR, width - b * NR));
          for (std::int64_t j = 0; j < npb; ++j) {
            const std::int64_t pb = pb0 + j;
            gemm_tile<W>(rows + j * taps * kMR, taps, depth, panel,
                         out + pb * kMR * ld_out + g * width + b * NR, ld_out,
                         static_cast<int>(lesser(kMR, P - pb * kMR)), nvalid);
          }
        }
      }
    delete[] rows;
  }
}

// dw[k][c][t] = sum_p x[p@t][c] * dy[p][k]; tile of kMR channels x 2W output channels.
template <int W>
void backward_weights(const Geometry& G, const StagedTensors& ts, const float* zero) {
  using vf = typename Vec<W>::type;
  constexpr int NR = 2 * W;
  constexpr int kMR = kTileRows<W>;
  constexpr std::int64_t kChunk = 256;
  const std::int64_t taps = G.taps(), P = G.n * G.od * G.oh * G.ow;
  const std::int64_t cblocks = (G.cg + kMR - 1) / kMR, kblocks = (G.kg + NR - 1) / NR;
#pragma omp parallel
  {
    const float** xr = new const float*[kChunk];
#pragma omp for collapse(3) schedule(dynamic, 1)
    for (std::int64_t g = 0; g < G.g; ++g)
      for (std::int64_t t = 0; t < taps; ++t)
        for (std::int64_t cb = 0; cb < cblocks; ++cb) {
          const std::int64_t a = t / (G.kh * G.kw), b = (t / G.kw) % G.kh, e = t % G.kw;
          const std::int64_t c0 = cb * kMR;
          const int cvalid = static_cast<int>(lesser(kMR, G.cg - c0));
          for (std::int64_t kb = 0; kb < kblocks; ++kb) {
            const std::int64_t k0 = g * G.kg + kb * NR;
            const int kvalid = static_cast<int>(lesser(NR, G.kg - kb * NR));
            vf acc0[kMR], acc1[kMR];
            for (int m = 0; m < kMR; ++m) acc0[m] = acc1[m] = vf{};
            for (std::int64_t p0 = 0; p0 < P; p0 += kChunk) {
              const std::int64_t pn = lesser(kChunk, P - p0);
              for (std::int64_t i = 0; i < pn; ++i) {
                const Pixel px = decode(p0 + i, G.od, G.oh, G.ow);
                const std::int64_t id = px.d * G.sd - G.pd + a * G.dd,
                                   ih = px.h * G.sh - G.ph + b * G.dh,
                                   iw = px.w * G.sw - G.pw + e * G.dw;
                const bool ok =
                    id >= 0 && id < G.id && ih >= 0 && ih < G.ih && iw >= 0 && iw < G.iw;
                xr[i] = ok ? ts.x + (((px.n * G.id + id) * G.ih + ih) * G.iw + iw) * G.c() +
                                 g * G.cg + c0
                           : zero;
              }
              for (std::int64_t i = 0; i < pn; ++i) {
                const float* dy = ts.y + (p0 + i) * G.k() + k0;
                vf b0, b1;
                if (kvalid == NR) {
                  b0 = load<W>(dy);
                  b1 = load<W>(dy + W);
                } else {
                  float tmp[NR] = {};
                  std::memcpy(tmp, dy, static_cast<std::size_t>(kvalid) * sizeof(float));
                  b0 = load<W>(tmp);
                  b1 = load<W>(tmp + W);
                }
                const float* x = xr[i];
                for (int m = 0; m < kMR; ++m) {
                  const float xm = m < cvalid ? x[m] : 0.f;
                  const vf av = broadcast<W>(&xm);
                  acc0[m] += av * b0;
                  acc1[m] += av * b1;
                }
              }
            }
            for (int m = 0; m < cvalid; ++m) {
              float tmp[NR];
              std::memcpy(tmp, &acc0[m], sizeof(vf));
              std::memcpy(tmp + W, &acc1[m], sizeof(vf));
              for (int j = 0; j < kvalid; ++j) ts.w[((k0 + j) * G.cg + c0 + m) * taps + t] = tmp[j];
            }
          }
        }
    delete[] xr;
  }
}

// The entry point each per-ISA file defines under its own name.
template <int W>
void run(Direction d, const Geometry& G, const StagedTensors& t, const float* w, float* panels,
         const float* zero) {
  if (d == Direction::backward_weights) {
    backward_weights<W>(G, t, zero);
    return;
  }
  pack_panels<W>(G, w, panels, d == Direction::forward);
  forward_or_backward_data<W>(G, t, panels, zero, d == Direction::forward);
}

}  // namespace

}  // namespace convguard::cpu::igemm
