// cpu:bwdw_gemm's fp32 kernel for AVX2 (bwdw_gemm_kernels.hpp); compiled with -mavx2 -mfma. A word
// is one pixel. The panel is transposed in 8 x 8 blocks, and the register tile is 6 dy rows x 2
// vectors of 8 columns (12 accumulators, the 2 panel vectors and a broadcast in AVX2's 16
// registers), run over the panel's 64 columns as 4 groups of 16.
#include <immintrin.h>

#include "cpu/solvers/bwdw_gemm_kernels.hpp"

namespace convguard::cpu::bwdw_gemm {
namespace {

struct F32 {
  using T = float;
  using Vec = __m256;
  using Acc = __m256;
  using Words = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kGroupVectors = 2;
  static constexpr bool kPairs = false;
  static std::int64_t words(std::int64_t plane) { return plane; }
  static std::int64_t whole_words(std::int64_t plane) { return plane; }
  static std::int64_t first_pixel(std::int64_t w) { return w; }
  // Lane i set where bit i of `bits` is (the low 8 bits).
  static __m256i lanes_of(std::uint32_t bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit),
                              bit);
  }
  // Words [w, w + n) of a row, zero past them and where `valid` (bit i: pixel w + i) is clear;
  // vpmaskmovd reads nothing, and faults on nothing, where a lane's mask is clear.
  static __m256i load_words(const float* row, std::int64_t w, int n, std::int64_t,
                            std::uint32_t valid) {
    const std::uint32_t bits = ((1u << n) - 1) & valid & 0xffu;
    if (bits == 0xffu) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + w));
    return _mm256_maskload_epi32(reinterpret_cast<const int*>(row + w), lanes_of(bits));
  }
  static __m256i zero_words() { return _mm256_setzero_si256(); }
  static void store_words(std::uint32_t* p, __m256i v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  // r[i] = row i of an 8 x 8 block of words; afterwards r[j] = its column j. Pairs of rows
  // interleave (unpack), then quads (shuffle), then the 128-bit halves swap between row i and
  // i + 4 (permute2f128).
  [[gnu::always_inline]] static void transpose(__m256i (&r)[8]) {
    __m256 a[8], b[8];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      a[2 * i] =
          _mm256_unpacklo_ps(_mm256_castsi256_ps(r[2 * i]), _mm256_castsi256_ps(r[2 * i + 1]));
      a[2 * i + 1] =
          _mm256_unpackhi_ps(_mm256_castsi256_ps(r[2 * i]), _mm256_castsi256_ps(r[2 * i + 1]));
    }
    // b[4 h + m]: in each 128-bit half, column 4 (half) + m of rows 4 h .. 4 h + 3.
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      b[4 * h] = _mm256_shuffle_ps(a[4 * h], a[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
      b[4 * h + 1] = _mm256_shuffle_ps(a[4 * h], a[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
      b[4 * h + 2] = _mm256_shuffle_ps(a[4 * h + 1], a[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
      b[4 * h + 3] = _mm256_shuffle_ps(a[4 * h + 1], a[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      r[m] = _mm256_castps_si256(_mm256_permute2f128_ps(b[m], b[4 + m], 0x20));
      r[4 + m] = _mm256_castps_si256(_mm256_permute2f128_ps(b[m], b[4 + m], 0x31));
    }
  }
  static __m256 panel_vector(const std::uint32_t* p) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static __m256 broadcast(const float* row, std::int64_t w) {
    return _mm256_broadcast_ss(row + w);
  }
  static __m256 fma(__m256 acc, __m256 a, __m256 b) {
    return _mm256_fmadd_ps(a, b, acc);
  }
  static __m256 zero() {
    return _mm256_setzero_ps();
  }
  // The first `lanes` (1 to 8) of v to out.
  static void store_first(float* out, int lanes, __m256 v) {
    if (lanes >= 8) return _mm256_storeu_ps(out, v);
    _mm256_maskstore_ps(out, simd::avx2_lanes(0, lanes), v);
  }
};

}  // namespace

void run_avx2(const Args& a) {
  run<F32>(a);
}

}  // namespace convguard::cpu::bwdw_gemm
