// cpu:bwdw_rows's bf16 kernel (bwdw_rows_kernels.hpp); compiled with -mavx512f -mavx512bw
// -mavx512bf16. A vector holds 32 bf16 pixels of a row; vdpbf16ps multiplies dy's and x's
// pixel pairs and adds both products to one fp32 lane, so a step covers 32 pixels.
#include <immintrin.h>

// GCC 12's masked loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bwdw_rows_kernels.hpp"

namespace convguard::cpu::bwdw_rows {
namespace {

struct Bf16 {
  using T = std::uint16_t;
  using Vec = __m512bh;
  using Acc = __m512;
  static constexpr int kLanes = 16;             // accumulator floats
  static constexpr int kRowsK = 4, kColsJ = 6;  // register tile
  static Acc load_sums(const float* p) { return _mm512_load_ps(p); }
  static void store_sums(float* p, Acc v) { _mm512_store_ps(p, v); }
  static float add_lanes(const float* p) { return _mm512_reduce_add_ps(_mm512_load_ps(p)); }
  static constexpr int kPixels = 32;
  static constexpr std::uint32_t kAll = 0xffffffffu;
  static Vec load(std::uint32_t mask, const std::uint16_t* p) {
    return (__m512bh)_mm512_maskz_loadu_epi16(static_cast<__mmask32>(mask), p);
  }
  static __m512 multiply_add(__m512 acc, Vec a, Vec b) { return _mm512_dpbf16_ps(acc, a, b); }
};

}  // namespace

void run_bf16_avx512(const Args& a) {
  run<Bf16>(a);
}

}  // namespace convguard::cpu::bwdw_rows
