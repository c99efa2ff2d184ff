// cpu:bwdw_rows's fp32 kernel for AVX2 (bwdw_rows_kernels.hpp); compiled with -mavx2 -mfma.
// Steps of 8 pixels and a 3 x 4 register tile: 12 accumulators, 3 dy vectors and an x vector in
// AVX2's 16 registers (measured against 2 x 6, driver, AMD EPYC Zen 1, 2 threads, fastest of 300:
// C = 3 first layers at 224 and at 64 x 8 images 7-8% faster, at 64 and 16 -> 32 the same). A
// row's last, partial step loads through vmaskmovps, which reads nothing, and faults on nothing,
// past its lanes.
#include <immintrin.h>

#include "cpu/solvers/bwdw_rows_kernels.hpp"

namespace convguard::cpu::bwdw_rows {
namespace {

struct F32 {
  using T = float;
  using Vec = __m256;
  using Acc = __m256;
  static constexpr int kPixels = 8;
  static constexpr std::uint32_t kAll = 0xff;
  static constexpr int kLanes = 8;
  static constexpr int kRowsK = 3, kColsJ = 4;
  // mask: the step's first popcount(mask) pixels (RunCursor).
  static Vec load(std::uint32_t mask, const float* p) {
    if (mask == kAll) return _mm256_loadu_ps(p);
    return _mm256_maskload_ps(p, simd::avx2_lanes(0, __builtin_popcount(mask)));
  }
  static __m256 multiply_add(__m256 acc, Vec a, Vec b) { return _mm256_fmadd_ps(a, b, acc); }
  static Acc load_sums(const float* p) { return _mm256_load_ps(p); }
  static void store_sums(float* p, Acc v) { _mm256_store_ps(p, v); }
  // The 8 lanes' sum in a fixed order (halves, then pairs, then the last pair).
  static float add_lanes(const float* p) {
    const __m256 v = _mm256_load_ps(p);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace

void run_avx2(const Args& a) {
  run<F32>(a);
}

}  // namespace convguard::cpu::bwdw_rows
