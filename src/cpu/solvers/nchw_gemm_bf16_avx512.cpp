// cpu:nchw_gemm's bf16 kernel (vdpbf16ps); compiled with -mavx512f -mavx512bf16. The panel holds
// pairs of adjacent reduction rows per column, the filter pairs of the same rows per GEMM row, so
// one vdpbf16ps adds two products per lane in fp32; each output is rounded to bf16 once.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

// GCC 12's AVX-512 intrinsics pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bf16_round_avx512.hpp"
#include "cpu/solvers/nchw_gemm_bf16_store.hpp"
#include "cpu/solvers/nchw_gemm_bwdw_kernels.hpp"
#include "cpu/solvers/nchw_gemm_kernels.hpp"

namespace convguard::cpu::nchw_gemm {
namespace {

struct Bf16 {
  using T = std::uint16_t;
  using Word = std::uint32_t;
  static constexpr int kRows = kRowsAvx512, kCols = kColsAvx512, NV = kCols / 16;

  static constexpr bool kReadsInPlace = false;  // pairs of rows are interleaved by the packing
  static std::int64_t words(std::int64_t depth) { return (depth + 1) / 2; }
  static void store_row(const float* from, std::uint16_t* to, int len, std::int64_t step) {
    store_bf16_row(from, to, len, step);
  }

  // n <= 16 columns of a run of step 1 or 2 as (lo, hi) words, hi zero unless `second`. Step 2
  // loads 2n - 1 elements and keeps the even ones: the low half of each 32-bit lane of lo, and
  // hi's shifted up (its odd element falls out). Masked loads touch nothing past the run's last
  // element, which may be the tensor's last.
  static __m512i pairs(const T* lo, const T* hi, bool second, std::int64_t step, int n) {
    if (step == 1) {
      const auto m = static_cast<__mmask16>((1u << n) - 1);
      const __m512i l = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, lo));
      if (!second) return l;
      return _mm512_or_si512(
          l, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, hi)), 16));
    }
    const auto m = static_cast<__mmask32>((1u << (2 * n - 1)) - 1);
    const __m512i l = _mm512_and_si512(_mm512_maskz_loadu_epi16(m, lo), _mm512_set1_epi32(0xFFFF));
    if (!second) return l;
    return _mm512_or_si512(l, _mm512_slli_epi32(_mm512_maskz_loadu_epi16(m, hi), 16));
  }

  // Word row d2 of the panel: (row 2 d2, row 2 d2 + 1) of each column; the second is zero past
  // the last row.
  static void pack(std::uint32_t* b, const Run<T>* runs, int count, std::int64_t depth,
                   const std::int64_t* at) {
    for (std::int64_t d2 = 0; d2 < words(depth); ++d2) {
      std::uint32_t* row = b + d2 * kCols;
      const bool second = 2 * d2 + 1 < depth;
      for (int r = 0; r < count; ++r) {
        const Run<T>& u = runs[r];
        std::uint32_t* to = row + u.j0;
        if (!u.p) {
          std::memset(to, 0, sizeof(std::uint32_t) * u.len);
          continue;
        }
        const T* lo = u.p + at[2 * d2];
        const T* hi = second ? u.p + at[2 * d2 + 1] : lo;
        if (u.step <= 2) {
          // The next panel's columns of these rows (if the run goes on there): every row is its
          // own stream, hundreds of them, too many for the hardware prefetchers, so the packing
          // waited on each row's first line.
          for (std::int64_t l = 0; l < kCols * u.step * 2; l += 64) {
            _mm_prefetch(reinterpret_cast<const char*>(lo + kCols * u.step) + l, _MM_HINT_T1);
            _mm_prefetch(reinterpret_cast<const char*>(hi + kCols * u.step) + l, _MM_HINT_T1);
          }
          for (int i = 0; i < u.len; i += 16) {
            const int n = std::min(16, u.len - i);
            const __m512i v = pairs(lo + i * u.step, hi + i * u.step, second, u.step, n);
            if (n == 16)
              _mm512_storeu_si512(to + i, v);
            else
              _mm512_mask_storeu_epi32(to + i, static_cast<__mmask16>((1u << n) - 1), v);
          }
          continue;
        }
        for (int i = 0; i < u.len; ++i) {
          const std::uint32_t h = second ? hi[i * u.step] : 0u;
          to[i] = lo[i * u.step] | h << 16;
        }
      }
    }
  }

  using Rows = FilterRows<std::uint32_t, kRows>;
  using Acc = __m512;
  // NU: the vectors computed (run()'s narrow tail); the others stay zero.
  template <int NU = NV>
  [[gnu::always_inline]] static void accumulate(const Rows& a, const std::uint32_t* b,
                                                std::int64_t ldb, std::int64_t words,
                                                __m512 (&acc)[kRows][NV],
                                                const float* init = nullptr) {
    for (int r = 0; r < kRows; ++r)
      for (int v = 0; v < NV; ++v)
        acc[r][v] =
            init && v < NU ? _mm512_loadu_ps(init + r * kCols + v * 16) : _mm512_setzero_ps();
    for (std::int64_t d = 0; d < words; ++d) {
      __m512bh bv[NU];
      for (int v = 0; v < NU; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + d * ldb + v * 16);
      for (int r = 0; r < kRows; ++r) {
        // memcpy: an in-place filter is the caller's uint16_t array, maybe 2 bytes off a word.
        std::uint32_t word;
        std::memcpy(&word, a.rows[r] + d * a.step, sizeof word);
        const __m512bh s = (__m512bh)_mm512_set1_epi32(static_cast<int>(word));
        for (int v = 0; v < NU; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], s, bv[v]);
      }
    }
  }
  // out[r][0..kCols) (rows ldo apart), rounded to bf16, for r < rows.
  static void tile(const Rows& a, const std::uint32_t* b, std::int64_t ldb, std::int64_t words,
                   std::uint16_t* out, std::int64_t ldo, int rows, bool stream) {
    __m512 acc[kRows][NV];
    accumulate(a, b, ldb, words, acc);
    store_bf16_tile(acc, out, ldo, rows, stream);
  }
  static void tile_f32(const Rows& a, const std::uint32_t* b, std::int64_t ldb, std::int64_t words,
                       float* out, std::int64_t ldo, int rows) {
    __m512 acc[kRows][NV];
    accumulate(a, b, ldb, words, acc);
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(out + r * ldo + v * 16, acc[r][v]);
  }
};

// Backward-weights: 32 pixels (16 pairs of adjacent ones) per vector; vdpbf16ps adds a pair's
// two products per lane.
struct WeightsBf16 {
  using T = std::uint16_t;
  using Vec = __m512bh;
  static constexpr int kStep = 32;
  static __m512bh load(const std::uint16_t* p, int count) {
    if (count == kStep) return (__m512bh)_mm512_loadu_si512(p);
    // Whole pairs by a masked load; an odd last pixel alone (its pair's other half is past the
    // row, maybe past the tensor), paired with a zero.
    const int pairs = count / 2;
    __m512i v = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << pairs) - 1), p);
    if (count % 2) v = _mm512_mask_set1_epi32(v, static_cast<__mmask16>(1u << pairs), p[count - 1]);
    return (__m512bh)v;
  }
  static __m512 fma(__m512 acc, __m512bh a, __m512bh b) { return _mm512_dpbf16_ps(acc, a, b); }
};

}  // namespace

void run_bf16_avx512(const Args& a) {
  run<Bf16>(a);
}

void pack_transposed_filter_bf16(const std::uint16_t* w, std::int64_t g, std::int64_t depth,
                                 std::int64_t m, std::uint32_t* out) {
  constexpr int R = kRowsAvx512;
  static_assert(R <= 8, "one 128-bit load of 16-bit elements per reduction row");
  const std::int64_t blocks = (m + R - 1) / R, words = (depth + 1) / 2;
  // A slice of word rows at a time, every block of it in turn: the slice's filter rows stay in L1
  // (each block walking every filter row read R x 2 bytes of rows up to 4 KB apart). Loads and
  // stores are whole 8-element (8-word) vectors where they stay inside the row and the slice:
  // masked ones cost several times more here (AMD Zen 5), and the pack took 14% of a 2048 -> 512
  // 7x7 layer's time. A whole store is one block word (R = 8); a smaller R would have its words
  // past a block's word land on its next word, stored next.
  constexpr std::int64_t kSlice = 8;
  const std::int64_t slices = (words + kSlice - 1) / kSlice;
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < g; ++grp)
    for (std::int64_t slice = 0; slice < slices; ++slice) {
      const std::int64_t d_first = slice * kSlice, d_end = std::min(words, d_first + kSlice);
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t live = std::min<std::int64_t>(R, m - b * R);
        const bool whole_loads = b * R + 8 <= m;
        const auto rows = static_cast<__mmask8>((1u << live) - 1);
        const std::uint16_t* col = w + grp * depth * m + b * R;
        std::uint32_t* o = out + (grp * blocks + b) * words * R;
        const auto load = [&](const std::uint16_t* p) {
          return _mm256_cvtepu16_epi32(whole_loads ? _mm_loadu_si128((const __m128i*)p)
                                                   : _mm_maskz_loadu_epi16(rows, p));
        };
        for (std::int64_t d2 = d_first; d2 < d_end; ++d2) {
          const __m256i lo = load(col + 2 * d2 * m);
          const __m256i hi =
              2 * d2 + 1 < depth ? load(col + (2 * d2 + 1) * m) : _mm256_setzero_si256();
          // Lanes past `live` are zero (masked) or the next block's (whole): zeroed.
          const __m256i v = _mm256_maskz_or_epi32(rows, lo, _mm256_slli_epi32(hi, 16));
          if (d2 + 1 < d_end)
            _mm256_storeu_si256((__m256i*)(o + d2 * R), v);
          else
            _mm256_mask_storeu_epi32(o + d2 * R, static_cast<__mmask8>((1u << R) - 1), v);
        }
      }
    }
}

void backward_weights_bf16_avx512(const WeightsArgs& a) {
  backward_weights<WeightsBf16>(a);
}

}  // namespace convguard::cpu::nchw_gemm
