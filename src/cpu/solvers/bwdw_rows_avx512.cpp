// cpu:bwdw_rows's fp32 kernel (bwdw_rows_kernels.hpp); compiled with -mavx512f -mfma.
#include <immintrin.h>

// GCC 12's masked loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bwdw_rows_kernels.hpp"

namespace convguard::cpu::bwdw_rows {
namespace {

struct F32 {
  using T = float;
  using Vec = __m512;
  using Acc = __m512;
  static constexpr int kLanes = 16;             // accumulator floats
  static constexpr int kRowsK = 4, kColsJ = 6;  // register tile
  static Acc load_sums(const float* p) { return _mm512_load_ps(p); }
  static void store_sums(float* p, Acc v) { _mm512_store_ps(p, v); }
  static float add_lanes(const float* p) { return _mm512_reduce_add_ps(_mm512_load_ps(p)); }
  static constexpr int kPixels = 16;
  static constexpr std::uint32_t kAll = 0xffff;
  static Vec load(std::uint32_t mask, const float* p) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), p);
  }
  static __m512 multiply_add(__m512 acc, Vec a, Vec b) { return _mm512_fmadd_ps(a, b, acc); }
};

}  // namespace

void run_avx512(const Args& a) {
  run<F32>(a);
}

}  // namespace convguard::cpu::bwdw_rows
