// cpu:bwdw_gemm's bf16 kernel (bwdw_gemm_kernels.hpp); compiled with -mavx512f -mavx512bw
// -mavx512bf16. A word is a pair of adjacent pixels, already adjacent in both x and dy: the
// panel's transpose moves 32-bit words, and vdpbf16ps adds a pair's two products to one fp32
// lane. An odd plane's last word is its last pixel with a zero beside it, in both operands (the
// pixel after it is the next row's: multiplying it by a zero could still give NaN).
#include <immintrin.h>

#include <cstring>

// GCC 12's masked loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bwdw_gemm_kernels.hpp"

namespace convguard::cpu::bwdw_gemm {
namespace {

struct Bf16 : Avx512Panel {
  using T = std::uint16_t;
  using Vec = __m512bh;
  static constexpr bool kPairs = true;
  static std::int64_t words(std::int64_t plane) { return (plane + 1) / 2; }
  static std::int64_t whole_words(std::int64_t plane) { return plane / 2; }
  static std::int64_t first_pixel(std::int64_t w) { return 2 * w; }
  // Words [w, w + n) of a row: its pixels 2 w .. 2 w + 2 n - 1, zero past the plane and where
  // `valid` (bit i: pixel 2 w + i) is clear.
  static __m512i load_words(const std::uint16_t* row, std::int64_t w, int n, std::int64_t plane,
                            std::uint32_t valid) {
    const std::int64_t pixels = 2 * w + 2 * n <= plane ? 2 * n : plane - 2 * w;
    const auto mask = pixels >= 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << pixels) - 1;
    return _mm512_maskz_loadu_epi16(static_cast<__mmask32>(mask & valid), row + 2 * w);
  }
  static __m512bh panel_vector(const std::uint32_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
  static __m512bh broadcast(const std::uint16_t* row, std::int64_t w) {
    std::uint32_t word;
    std::memcpy(&word, row + 2 * w, sizeof word);
    return (__m512bh)_mm512_set1_epi32(static_cast<int>(word));
  }
  static __m512bh broadcast_last(const std::uint16_t* row, std::int64_t plane) {
    return (__m512bh)_mm512_set1_epi32(row[plane - 1]);
  }
  static __m512 fma(__m512 acc, __m512bh a, __m512bh b) { return _mm512_dpbf16_ps(acc, a, b); }
};

}  // namespace

void run_bf16_avx512(const Args& a) {
  run<Bf16>(a);
}

}  // namespace convguard::cpu::bwdw_gemm
