// cpu:bwdw_gemm's loop, generic over an element policy P (F32 in bwdw_gemm_avx512.cpp and
// bwdw_gemm_avx2.cpp, Bf16 in bwdw_gemm_bf16_avx512.cpp). Included only by the per-ISA files,
// compiled with their flags; internal linkage and no library templates (see simd.hpp).
//
// A work item is (chunk, group, panel of 64 x channels, range of dy's 6-row blocks). It transposes
// its chunk's words of those x channels into a dense [words][64] panel (kLanes x kLanes word
// blocks in registers), then runs the register tile over the whole chunk for each of its row
// blocks: 6 dy rows broadcast word by word (read where they lie, one sequential stream each)
// against kGroupVectors vectors of the panel row (AVX-512: 6 x 4 vectors of 16, the panel's 64
// columns at once; AVX2: 6 x 2 vectors of 8, its 64 columns as 4 groups of 16, dy's rows read once
// a group). Each partial sum is one tile's, in word order, stored once: the bits
// do not depend on the thread count. The transpose is paid once per item and reused by every row
// block, so its share is about 1 / (rows of dy) of the work: x, the tensor whose channels become
// the vector lanes, is the one transposed because dW is [K][C], contiguous along C.
#pragma once

#include <immintrin.h>
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "cpu/solvers/bwdw_gemm_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::bwdw_gemm {
namespace {

using simd::lesser;

constexpr int kRows = 6;

#ifdef __AVX512F__
// What the AVX-512 policies (F32 and Bf16) share: 16-word vectors, the panel's 64 columns as one
// group of 4 vectors (6 x 4 accumulators), a 16 x 16 transpose.
struct Avx512Panel {
  using Words = __m512i;
  using Acc = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kGroupVectors = 4;
  static Words zero_words() { return _mm512_setzero_si512(); }
  static void store_words(std::uint32_t* p, Words v) { _mm512_storeu_si512(p, v); }
  // r[i] = row i of a 16 x 16 block of words; afterwards r[j] = its column j. (The same
  // permutation as cpu/transpose16.hpp's, kept as it was here, unrolled and always inlined: the
  // two are to be made one where an AVX-512 machine can measure the change.)
  [[gnu::always_inline]] static void transpose(Words (&r)[16]) {
    __m512i a[16], b[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
      a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // b[4 i + m]: in each 128-bit lane L, column 4 L + m of rows 4 i .. 4 i + 3.
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      b[4 * i] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
      b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
      b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
      b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
    }
    // Column 4 L + m is lane L of b[m], b[4 + m], b[8 + m], b[12 + m], in that order.
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const __m512i u0 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0x44);
      const __m512i u1 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0xEE);
      const __m512i v0 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0x44);
      const __m512i v1 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0xEE);
      r[m] = _mm512_shuffle_i32x4(u0, v0, 0x88);
      r[4 + m] = _mm512_shuffle_i32x4(u0, v0, 0xDD);
      r[8 + m] = _mm512_shuffle_i32x4(u1, v1, 0x88);
      r[12 + m] = _mm512_shuffle_i32x4(u1, v1, 0xDD);
    }
  }
  static Acc zero() {
    return _mm512_setzero_ps();
  }
  // The first `lanes` (1 to 16) of v to out.
  static void store_first(float* out, int lanes, Acc v) {
    if (lanes >= 16)
      _mm512_storeu_ps(out, v);
    else
      _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << lanes) - 1), v);
  }
};
#endif

// 32 bits of `valid` from bit `first` on (Args::valid).
inline std::uint32_t valid_bits(const std::uint64_t* valid, std::int64_t first) {
  std::uint64_t word;
  std::memcpy(&word, reinterpret_cast<const unsigned char*>(valid) + first / 8, sizeof word);
  return static_cast<std::uint32_t>(word >> (first % 8));
}

// Words [w0, w1) of image n's panel columns j0 .. j0 + 63 of group grp (column j: channel j /
// taps, tap j % taps) into panel rows 0 .. w1 - w0 (columns past cg * taps zero).
template <class P>
void pack(const Args& g, std::int64_t n, std::int64_t grp, std::int64_t j0, std::int64_t w0,
          std::int64_t w1, std::uint32_t* panel) {
  using T = typename P::T;
  const T* x = static_cast<const T*>(g.x) + (n * g.g + grp) * g.cg * g.x_plane;
  const std::int64_t live = lesser(kPanelColumns, g.cg * g.taps - j0);
  const T* row[kPanelColumns];
  for (std::int64_t j = 0; j < live; ++j) {
    const std::int64_t c = (j0 + j) / g.taps, t = (j0 + j) % g.taps;
    row[j] = x + c * g.x_plane + (g.tap_at ? g.tap_at[t] : 0);
  }
  constexpr int L = P::kLanes;
  for (std::int64_t w = w0; w < w1; w += L) {
    const int words = static_cast<int>(lesser(L, w1 - w));
    const std::uint32_t valid = g.valid ? valid_bits(g.valid, P::first_pixel(w)) : ~0u;
    for (int q = 0; q < kPanelColumns / L; ++q) {
      typename P::Words r[L];
#pragma GCC unroll 16
      for (int i = 0; i < L; ++i)
        r[i] = q * L + i < live ? P::load_words(row[q * L + i], w, words, g.plane, valid)
                                : P::zero_words();
      P::transpose(r);
      for (int j = 0; j < words; ++j)
        P::store_words(panel + (w - w0 + j) * kPanelColumns + q * L, r[j]);
    }
  }
}

// The sums of dy rows k0 .. k0 + rows - 1 with the panel's 64 columns over the chunk's words
// [f0, f1) (images' words flattened), stored to out (rows cg apart; columns past cg not), a group
// of kGroupVectors vectors of columns at a time (groups wholly past cg skipped).
template <class P>
void tile(const Args& g, std::int64_t grp, std::int64_t k0, int rows, std::int64_t c0,
          std::int64_t f0, std::int64_t f1, const std::uint32_t* panel, float* out) {
  using T = typename P::T;
  using Vec = typename P::Vec;
  constexpr int L = P::kLanes, V = P::kGroupVectors, kGroupColumns = L * V;
  const std::int64_t wpi = P::words(g.plane), whole = P::whole_words(g.plane);
  const std::int64_t columns = g.cg * g.taps, live = lesser(kPanelColumns, columns - c0);
  for (int c = 0; c < kPanelColumns && c < live; c += kGroupColumns) {
    typename P::Acc acc[kRows][V];
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = P::zero();
    for (std::int64_t f = f0; f < f1;) {
      const std::int64_t n = f / wpi, w0 = f % wpi, w1 = lesser(wpi, w0 + (f1 - f));
      const T* dy = static_cast<const T*>(g.dy) + ((n * g.g + grp) * g.kg + k0) * g.plane;
      const T* row[kRows];
      for (int r = 0; r < kRows; ++r) row[r] = dy + (r < rows ? r : rows - 1) * g.plane;
      const std::uint32_t* b = panel + (f - f0) * kPanelColumns + c;
      const std::int64_t stop = lesser(w1, whole);
      for (std::int64_t w = w0; w < stop; ++w, b += kPanelColumns) {
        Vec bv[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) bv[v] = P::panel_vector(b + v * L);
#pragma GCC unroll 6
        for (int r = 0; r < kRows; ++r) {
          const Vec s = P::broadcast(row[r], w);
#pragma GCC unroll 4
          for (int v = 0; v < V; ++v) acc[r][v] = P::fma(acc[r][v], s, bv[v]);
        }
      }
      if constexpr (P::kPairs) {
        if (w1 > whole) {  // an odd plane's last pixel alone (its panel word's upper half is 0)
          Vec bv[V];
          for (int v = 0; v < V; ++v) bv[v] = P::panel_vector(b + v * L);
          for (int r = 0; r < kRows; ++r) {
            const Vec s = P::broadcast_last(row[r], g.plane);
            for (int v = 0; v < V; ++v) acc[r][v] = P::fma(acc[r][v], s, bv[v]);
          }
        }
      }
      f += w1 - w0;
    }
    // Rows bounded by kRows (constant accumulator indices once unrolled; see rows_conv_kernels).
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        const std::int64_t lanes = live - c - v * L;
        if (r < rows && lanes > 0)
          P::store_first(out + r * columns + c + v * L, static_cast<int>(lesser(lanes, L)),
                         acc[r][v]);
      }
  }
}

template <class P>
void run(const Args& g) {
  const std::int64_t wpi = P::words(g.plane), total = g.n * wpi;
  const std::int64_t chunks = (total + g.chunk_words - 1) / g.chunk_words;
  const std::int64_t columns = g.cg * g.taps;
  const std::int64_t cpanels = (columns + kPanelColumns - 1) / kPanelColumns;
  const std::int64_t kblocks = (g.kg + kRows - 1) / kRows, size = g.g * g.kg * columns;
  // Row blocks are split over items only when chunks x groups x panels leave threads idle: each
  // split transposes the panel again.
  const std::int64_t base = chunks * g.g * cpanels, threads = omp_get_max_threads();
  std::int64_t splits = lesser(kblocks, (8 * threads + base - 1) / base);
  if (splits < 1) splits = 1;
  const std::int64_t per_split = (kblocks + splits - 1) / splits;
  splits = (kblocks + per_split - 1) / per_split;
#pragma omp parallel
  {
    auto* panel = static_cast<std::uint32_t*>(g.panels) +
                  omp_get_thread_num() * g.chunk_words * kPanelColumns;
#pragma omp for schedule(dynamic)
    for (std::int64_t item = 0; item < base * splits; ++item) {
      const std::int64_t split = item % splits, rest = item / splits;
      const std::int64_t cp = rest % cpanels, grp = rest / cpanels % g.g;
      const std::int64_t chunk = rest / (cpanels * g.g);
      const std::int64_t f0 = chunk * g.chunk_words, f1 = lesser(total, f0 + g.chunk_words);
      for (std::int64_t f = f0; f < f1;) {
        const std::int64_t n = f / wpi, w0 = f % wpi, w1 = lesser(wpi, w0 + (f1 - f));
        pack<P>(g, n, grp, cp * kPanelColumns, w0, w1, panel + (f - f0) * kPanelColumns);
        f += w1 - w0;
      }
      const std::int64_t kb1 = lesser(kblocks, (split + 1) * per_split);
      for (std::int64_t kb = split * per_split; kb < kb1; ++kb) {
        const int rows = static_cast<int>(lesser(kRows, g.kg - kb * kRows));
        float* out =
            g.partial + chunk * size + (grp * g.kg + kb * kRows) * columns + cp * kPanelColumns;
        tile<P>(g, grp, kb * kRows, rows, cp * kPanelColumns, f0, f1, panel, out);
      }
    }
  }
}

}  // namespace
}  // namespace convguard::cpu::bwdw_gemm
