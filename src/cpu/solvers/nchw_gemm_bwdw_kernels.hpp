// cpu:nchw_gemm's backward-weights loop (nchw_gemm_entry.hpp: WeightsArgs), generic over an element
// policy (its loads and multiply-add): bf16 in nchw_gemm_bf16_avx512.cpp. Included only by files
// compiled with -mavx512f and the policy's ISA; internal linkage, no library templates.
//
// fp32 has no policy: 8 vector loads per 16 FMAs make this loop load-bound, and it ran 1.5x slower
// than cpu:bwdw on ResNet-50's 1x1 layers (2026-11-24, AMD EPYC); bf16's vdpbf16ps does twice the
// work per load and beat cpu:bf16_direct on the 56x56 and 28x28 ones.
//
// dW[k][c] is a dot product of two rows that both run along the pixels, the contiguous dimension
// of an NCHW tensor: no transpose or packing at all. A 4 x 4 tile of dW keeps 16 vector
// accumulators (plus 8 row vectors: 24 of 32 registers); a row's last vector is a masked load.
// Work items are (chunk, group, 16 rows of k, 16 of c); an item takes its chunk's pixels in
// blocks of 16 vectors, and within a block its 16 tiles in turn, so each of its 32 rows is read
// from memory once and by 4 tiles from L1. The tiles' lane sums live in a 16 KB buffer between
// blocks and are summed across lanes once per chunk.
// Chunks are fixed by the problem, not the thread count, and summed in order by the caller, so the
// result is the same on any number of threads.
#pragma once

#include <immintrin.h>
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "cpu/solvers/nchw_gemm_entry.hpp"

namespace convguard::cpu::nchw_gemm {
namespace {

constexpr int kTile = 4, kBlock = 16, kTiles = (kBlock / kTile) * (kBlock / kTile);
// Vector steps per pixel block: the block's 16 + 16 rows (16 KB-32 KB) stay in L1 while the 16
// tiles of an item take them in turn.
constexpr int kBlockSteps = 16;

// A 4 x 4 tile (KR x CR at an edge) over pixels [p0, p1) of image n: its lane sums are kept in
// `acc` (16 vectors) between pixel blocks.
template <class P, int KR, int CR>
void weights_tile(const WeightsArgs& g, std::int64_t n, std::int64_t grp, std::int64_t k0,
                  std::int64_t c0, std::int64_t p0, std::int64_t p1, float* acc_store) {
  using T = typename P::T;
  const T* dy = static_cast<const T*>(g.dy) + ((n * g.g + grp) * g.kg + k0) * g.plane;
  const T* x = static_cast<const T*>(g.x) + ((n * g.g + grp) * g.cg + c0) * g.plane;
  __m512 acc[KR][CR];
  for (int i = 0; i < KR; ++i)
    for (int j = 0; j < CR; ++j) acc[i][j] = _mm512_load_ps(acc_store + (i * kTile + j) * 16);
  const auto step = [&](std::int64_t at, int count) {
    typename P::Vec a[KR], b[CR];
    for (int i = 0; i < KR; ++i) a[i] = P::load(dy + i * g.plane + at, count);
    for (int j = 0; j < CR; ++j) b[j] = P::load(x + j * g.plane + at, count);
    for (int i = 0; i < KR; ++i)
      for (int j = 0; j < CR; ++j) acc[i][j] = P::fma(acc[i][j], a[i], b[j]);
  };
  std::int64_t at = p0;
  for (; at + P::kStep <= p1; at += P::kStep) step(at, P::kStep);
  if (at < p1) step(at, static_cast<int>(p1 - at));
  for (int i = 0; i < KR; ++i)
    for (int j = 0; j < CR; ++j) _mm512_store_ps(acc_store + (i * kTile + j) * 16, acc[i][j]);
}

template <class P, int KR>
void weights_tile_k(const WeightsArgs& g, std::int64_t n, std::int64_t grp, std::int64_t k0,
                    std::int64_t c0, std::int64_t p0, std::int64_t p1, float* acc, int cr) {
  switch (cr) {
    case 1:
      return weights_tile<P, KR, 1>(g, n, grp, k0, c0, p0, p1, acc);
    case 2:
      return weights_tile<P, KR, 2>(g, n, grp, k0, c0, p0, p1, acc);
    case 3:
      return weights_tile<P, KR, 3>(g, n, grp, k0, c0, p0, p1, acc);
    default:
      return weights_tile<P, KR, 4>(g, n, grp, k0, c0, p0, p1, acc);
  }
}

template <class P>
void backward_weights(const WeightsArgs& g) {
  constexpr std::int64_t block = kBlockSteps * P::kStep;
  const std::int64_t chunks = (g.n + g.images_per_chunk - 1) / g.images_per_chunk;
  const std::int64_t kb = (g.kg + kBlock - 1) / kBlock, cb = (g.cg + kBlock - 1) / kBlock;
#pragma omp parallel
  {
    alignas(64) float acc[kTiles * kTile * kTile * 16];
#pragma omp for schedule(dynamic) collapse(4)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk)
      for (std::int64_t grp = 0; grp < g.g; ++grp)
        for (std::int64_t kblk = 0; kblk < kb; ++kblk)
          for (std::int64_t cblk = 0; cblk < cb; ++cblk) {
            const std::int64_t k_end = (kblk + 1) * kBlock < g.kg ? (kblk + 1) * kBlock : g.kg;
            const std::int64_t c_end = (cblk + 1) * kBlock < g.cg ? (cblk + 1) * kBlock : g.cg;
            std::memset(acc, 0, sizeof(acc));
            const std::int64_t n0 = chunk * g.images_per_chunk;
            const std::int64_t n1 = n0 + g.images_per_chunk < g.n ? n0 + g.images_per_chunk : g.n;
            for (std::int64_t n = n0; n < n1; ++n)
              for (std::int64_t p0 = 0; p0 < g.plane; p0 += block) {
                const std::int64_t p1 = p0 + block < g.plane ? p0 + block : g.plane;
                int t = 0;
                for (std::int64_t k = kblk * kBlock; k < k_end; k += kTile)
                  for (std::int64_t c = cblk * kBlock; c < c_end; c += kTile, ++t) {
                    const int cr = static_cast<int>(c_end - c < kTile ? c_end - c : kTile);
                    float* a = acc + t * kTile * kTile * 16;
                    switch (k_end - k < kTile ? k_end - k : kTile) {
                      case 1:
                        weights_tile_k<P, 1>(g, n, grp, k, c, p0, p1, a, cr);
                        break;
                      case 2:
                        weights_tile_k<P, 2>(g, n, grp, k, c, p0, p1, a, cr);
                        break;
                      case 3:
                        weights_tile_k<P, 3>(g, n, grp, k, c, p0, p1, a, cr);
                        break;
                      default:
                        weights_tile_k<P, 4>(g, n, grp, k, c, p0, p1, a, cr);
                    }
                  }
              }
            // Each output's lanes, summed once per chunk.
            int t = 0;
            for (std::int64_t k = kblk * kBlock; k < k_end; k += kTile)
              for (std::int64_t c = cblk * kBlock; c < c_end; c += kTile, ++t)
                for (int i = 0; i < kTile && k + i < k_end; ++i)
                  for (int j = 0; j < kTile && c + j < c_end; ++j) {
                    const __m512 v = _mm512_load_ps(acc + ((t * kTile + i) * kTile + j) * 16);
                    g.partial[((chunk * g.g + grp) * g.kg + k + i) * g.cg + c + j] =
                        _mm512_reduce_add_ps(v);
                  }
          }
  }
}

}  // namespace
}  // namespace convguard::cpu::nchw_gemm
