// Loops of cpu:direct, compiled once per ISA: direct_kernels.cpp (baseline x86-64),
// direct_avx2.cpp (-mavx2 -mfma) and direct_avx512.cpp (-mavx512f -mfma) each include this file
// and define their entry point; direct.cpp picks the best the CPU runs. Everything here has
// internal linkage (and no library templates), so no ISA-specific copy of an inline function can
// be picked by the linker for code that runs on a CPU without that ISA.
#pragma once

#include <cstdint>
#include <cstring>

#include "cpu/solvers/direct_entry.hpp"

// The AVX2 copy computes its forward tiles with explicit vectors (forward_tile_avx2). GCC 12's
// vectoriser, given the scalar tile below at AVX2's shapes (6 x 16, 12 x 8), made 128-bit code
// with spilled accumulators: 6x slower than the AVX-512 shapes it ran before (session 19,
// docs/perf/2026-11-30-session19/standard_f32_fwd_discarded_autovec.log).
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define CONVGUARD_DIRECT_AVX2_TILE 1
#endif

namespace convguard::cpu::direct {
namespace {

inline std::int64_t lesser(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

// The taps of one forward tile of row (od, oh) from column ow0: fn(xp, wv) once per (channel, tap)
// in the packed weights' order, xp the tap's first input column (the tile's columns G.sw apart),
// wv its KB packed weights.
template <int KB, typename TapFn>
[[gnu::always_inline]] inline void for_each_tap(const Geometry& G, const Sizes5& xs,
                                                const float* xg, const float* wb, std::int64_t od,
                                                std::int64_t oh, std::int64_t ow0, TapFn&& fn) {
  const std::int64_t plane = xs.d * xs.h * xs.w, taps = G.taps();
  for (std::int64_t c = 0; c < G.cg; ++c) {
    const float* xc = xg + c * plane;
    std::int64_t t = 0;
    for (std::int64_t a = 0; a < G.kd; ++a)
      for (std::int64_t b = 0; b < G.kh; ++b) {
        const float* xr =
            xc + ((od * G.sd + a * G.dd) * xs.h + oh * G.sh + b * G.dh) * xs.w + ow0 * G.sw;
        for (std::int64_t e = 0; e < G.kw; ++e, ++t) fn(xr + e * G.dw, wb + (c * taps + t) * KB);
      }
  }
}

// One forward tile: KB output channels x OWB output columns of row (od, oh), all in registers.
template <int KB, int OWB>
[[gnu::always_inline]] inline void forward_tile(const Geometry& G, const Sizes5& xs,
                                                const float* xg, const float* wb, std::int64_t od,
                                                std::int64_t oh, std::int64_t ow0,
                                                float (&acc)[KB][OWB]) {
  for (int kb = 0; kb < KB; ++kb)
    for (int j = 0; j < OWB; ++j) acc[kb][j] = 0.f;
  for_each_tap<KB>(G, xs, xg, wb, od, oh, ow0,
                   [&](const float* xp, const float* wv) [[gnu::always_inline]] {
                     if (G.sw == 1) {
                       for (int kb = 0; kb < KB; ++kb)
                         for (int j = 0; j < OWB; ++j) acc[kb][j] += wv[kb] * xp[j];
                     } else {
                       float xv[OWB];
                       for (int j = 0; j < OWB; ++j) xv[j] = xp[j * G.sw];
                       for (int kb = 0; kb < KB; ++kb)
                         for (int j = 0; j < OWB; ++j) acc[kb][j] += wv[kb] * xv[j];
                     }
                   });
}

#ifdef CONVGUARD_DIRECT_AVX2_TILE
// The same tile as forward_tile, as KB x OWB / 8 vectors of 8 columns: per tap, OWB / 8 loads of
// x (a gather into a row of OWB for width strides above 1), then a broadcast weight and OWB / 8
// FMAs per output channel. forward_blocking keeps KB x OWB / 8 at 12 accumulators.
template <int KB, int OWB>
[[gnu::always_inline]] inline void forward_tile_avx2(const Geometry& G, const Sizes5& xs,
                                                     const float* xg, const float* wb,
                                                     std::int64_t od, std::int64_t oh,
                                                     std::int64_t ow0, float (&out)[KB][OWB]) {
  constexpr int NV = OWB / 8;
  static_assert(OWB % 8 == 0, "whole vectors");
  __m256 acc[KB][NV];
  for (int kb = 0; kb < KB; ++kb)
    for (int j = 0; j < NV; ++j) acc[kb][j] = _mm256_setzero_ps();
  for_each_tap<KB>(G, xs, xg, wb, od, oh, ow0,
                   [&](const float* xp, const float* wv) [[gnu::always_inline]] {
                     __m256 xv[NV];
                     if (G.sw == 1) {
                       for (int j = 0; j < NV; ++j) xv[j] = _mm256_loadu_ps(xp + 8 * j);
                     } else {
                       alignas(32) float row[OWB];
                       for (int j = 0; j < OWB; ++j) row[j] = xp[j * G.sw];
                       for (int j = 0; j < NV; ++j) xv[j] = _mm256_load_ps(row + 8 * j);
                     }
                     for (int kb = 0; kb < KB; ++kb) {
                       const __m256 w = _mm256_broadcast_ss(wv + kb);
                       for (int j = 0; j < NV; ++j)
                         acc[kb][j] = _mm256_fmadd_ps(w, xv[j], acc[kb][j]);
                     }
                   });
  for (int kb = 0; kb < KB; ++kb)
    for (int j = 0; j < NV; ++j) _mm256_storeu_ps(&out[kb][8 * j], acc[kb][j]);
}
#endif

// kVectorTile: forward_tile_avx2 (the AVX2 copy's shapes), else forward_tile.
template <int KB, int OWB, bool kVectorTile>
[[gnu::always_inline]] inline void forward_all(const Geometry& G, const StagedTensors& t,
                                               const float* wpk) {
  const Sizes5& xs = t.xs;
  const std::int64_t kblocks = (G.kg + KB - 1) / KB;
  const std::int64_t xplane = xs.d * xs.h * xs.w, taps = G.taps(), os = G.out_spatial();
#pragma omp parallel for collapse(4) schedule(static)
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t g = 0; g < G.g; ++g)
      for (std::int64_t b = 0; b < kblocks; ++b)
        for (std::int64_t od = 0; od < G.od; ++od)
          for (std::int64_t oh = 0; oh < G.oh; ++oh) {
            const float* xg = t.x + (n * G.c() + g * G.cg) * xplane;
            const float* wb = wpk + (g * kblocks + b) * G.cg * taps * KB;
            const int kvalid = static_cast<int>(lesser(KB, G.kg - b * KB));
            for (std::int64_t ow0 = 0; ow0 < G.ow; ow0 += OWB) {
              float acc[KB][OWB];
              if constexpr (kVectorTile) {
#ifdef CONVGUARD_DIRECT_AVX2_TILE
                forward_tile_avx2<KB, OWB>(G, xs, xg, wb, od, oh, ow0, acc);
#endif
              } else {
                forward_tile<KB, OWB>(G, xs, xg, wb, od, oh, ow0, acc);
              }
              const int wvalid = static_cast<int>(lesser(OWB, G.ow - ow0));
              for (int kb = 0; kb < kvalid; ++kb) {
                float* yr = t.y + ((n * G.k() + g * G.kg + b * KB + kb) * os) +
                            (od * G.oh + oh) * G.ow + ow0;
                for (int j = 0; j < wvalid; ++j) yr[j] = acc[kb][j];
              }
            }
          }
}

// L: the vector lanes of the ISA this copy is compiled for (forward_blocking).
template <int L>
void forward(const Geometry& G, const StagedTensors& t, const float* wpk) {
  const Blocking b = forward_blocking(G, L);
  if constexpr (L == 8) {
#ifndef CONVGUARD_DIRECT_AVX2_TILE
    static_assert(L != 8, "the AVX2 copy of cpu:direct needs -mavx2 -mfma (forward_tile_avx2)");
#endif
    if (b.kb == 6) {
      forward_all<6, 16, true>(G, t, wpk);
    } else {
      forward_all<12, 8, true>(G, t, wpk);
    }
  } else if (b.owb == 32) {
    forward_all<6, 32, false>(G, t, wpk);
  } else {
    forward_all<12, 16, false>(G, t, wpk);
  }
}

// dx (padded, channels-first) = scatter of every dy row through every tap; one thread owns
// each dx plane so there are no races.
void backward_data(const Geometry& G, const StagedTensors& t) {
  const Sizes5& xs = t.xs;
  const std::int64_t xplane = xs.d * xs.h * xs.w, taps = G.taps(), os = G.out_spatial();
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t c = 0; c < G.c(); ++c) {
      const std::int64_t g = c / G.cg, cl = c % G.cg;
      float* plane = t.x + (n * G.c() + c) * xplane;
      std::memset(plane, 0, static_cast<std::size_t>(xplane) * sizeof(float));
      for (std::int64_t kl = 0; kl < G.kg; ++kl) {
        const std::int64_t k = g * G.kg + kl;
        const float* dyk = t.y + (n * G.k() + k) * os;
        const float* wk = t.w + (k * G.cg + cl) * taps;
        std::int64_t tap = 0;
        for (std::int64_t a = 0; a < G.kd; ++a)
          for (std::int64_t b = 0; b < G.kh; ++b)
            for (std::int64_t e = 0; e < G.kw; ++e, ++tap) {
              const float wv = wk[tap];
              for (std::int64_t od = 0; od < G.od; ++od)
                for (std::int64_t oh = 0; oh < G.oh; ++oh) {
                  float* dst = plane +
                               ((od * G.sd + a * G.dd) * xs.h + oh * G.sh + b * G.dh) * xs.w +
                               e * G.dw;
                  const float* src = dyk + (od * G.oh + oh) * G.ow;
                  if (G.sw == 1) {
                    for (std::int64_t ow = 0; ow < G.ow; ++ow) dst[ow] += wv * src[ow];
                  } else {
                    for (std::int64_t ow = 0; ow < G.ow; ++ow) dst[ow * G.sw] += wv * src[ow];
                  }
                }
            }
      }
    }
}

// dw[k][c][tap] = sum over n and output positions of dy * x-window, reduced in 16 lanes.
void backward_weights(const Geometry& G, const StagedTensors& t) {
  const Sizes5& xs = t.xs;
  const std::int64_t xplane = xs.d * xs.h * xs.w, taps = G.taps(), os = G.out_spatial();
  constexpr int L = 16;
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
  for (std::int64_t k = 0; k < G.k(); ++k)
    for (std::int64_t cl = 0; cl < G.cg; ++cl) {
      const std::int64_t c = (k / G.kg) * G.cg + cl;
      std::int64_t tap = 0;
      for (std::int64_t a = 0; a < G.kd; ++a)
        for (std::int64_t b = 0; b < G.kh; ++b)
          for (std::int64_t e = 0; e < G.kw; ++e, ++tap) {
            float lanes[L] = {};
            float tail = 0.f;
            for (std::int64_t n = 0; n < G.n; ++n) {
              const float* dyk = t.y + (n * G.k() + k) * os;
              const float* xc = t.x + (n * G.c() + c) * xplane;
              for (std::int64_t od = 0; od < G.od; ++od)
                for (std::int64_t oh = 0; oh < G.oh; ++oh) {
                  const float* dr = dyk + (od * G.oh + oh) * G.ow;
                  const float* xr =
                      xc + ((od * G.sd + a * G.dd) * xs.h + oh * G.sh + b * G.dh) * xs.w + e * G.dw;
                  std::int64_t ow = 0;
                  for (; ow + L <= G.ow; ow += L)
                    for (int j = 0; j < L; ++j) lanes[j] += dr[ow + j] * xr[(ow + j) * G.sw];
                  for (; ow < G.ow; ++ow) tail += dr[ow] * xr[ow * G.sw];
                }
            }
            float sum = tail;
            for (int j = 0; j < L; ++j) sum += lanes[j];
            t.w[(k * G.cg + cl) * taps + tap] = sum;
          }
    }
}

// The entry point each per-ISA file defines under its own name.
template <int L>
void run_direction(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk) {
  switch (d) {
    case Direction::forward:
      forward<L>(G, t, wpk);
      break;
    case Direction::backward_data:
      backward_data(G, t);
      break;
    case Direction::backward_weights:
      backward_weights(G, t);
      break;
  }
}

}  // namespace
}  // namespace convguard::cpu::direct
