// cpu:bwdw_gemm's fp32 kernel (bwdw_gemm_kernels.hpp); compiled with -mavx512f -mfma. A word is
// one pixel: one FMA per product.
#include <immintrin.h>

// GCC 12's masked loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bwdw_gemm_kernels.hpp"

namespace convguard::cpu::bwdw_gemm {
namespace {

struct F32 : Avx512Panel {
  using T = float;
  using Vec = __m512;
  static constexpr bool kPairs = false;
  static std::int64_t words(std::int64_t plane) { return plane; }
  static std::int64_t whole_words(std::int64_t plane) { return plane; }
  static std::int64_t first_pixel(std::int64_t w) { return w; }
  // Words [w, w + n) of a row, zero past them and where `valid` (bit i: pixel w + i) is clear.
  static __m512i load_words(const float* row, std::int64_t w, int n, std::int64_t,
                            std::uint32_t valid) {
    return _mm512_maskz_loadu_epi32(static_cast<__mmask16>(((1u << n) - 1) & valid), row + w);
  }
  static __m512 panel_vector(const std::uint32_t* p) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static __m512 broadcast(const float* row, std::int64_t w) { return _mm512_set1_ps(row[w]); }
  static __m512 fma(__m512 acc, __m512 a, __m512 b) { return _mm512_fmadd_ps(a, b, acc); }
};

}  // namespace

void run_avx512(const Args& a) {
  run<F32>(a);
}

}  // namespace convguard::cpu::bwdw_gemm
