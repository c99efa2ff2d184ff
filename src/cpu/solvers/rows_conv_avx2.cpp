// cpu:fwd_rows's and cpu:bwdd_rows's fp32 kernel for AVX2 (rows_conv_kernels.hpp); compiled with
// -mavx2 -mfma. The same tiles as the AVX-512 copy in vectors of 8 pixels, and about half the
// accumulators: AVX2 has 16 vector registers and no broadcast operand, so a tile holds MR x NV
// accumulators, its NV loaded vectors and one broadcast register (6 x 2 from 6 channels up).
#include <immintrin.h>

#include "cpu/solvers/rows_conv_kernels.hpp"

namespace convguard::cpu::rows_conv {
namespace {

struct F32 {
  using T = float;     // dy and dx elements
  using Word = float;  // window and filter words
  using Vec = __m256;
  using Acc = __m256;
  static constexpr int kPerWord = 1;
  static constexpr int kLanes = 8;
  // MR x NV + NV + 1 <= 16 registers.
  static constexpr int tile_vectors(int mr) { return mr == 1 ? 6 : mr == 2 ? 4 : mr <= 4 ? 3 : 2; }
  static Acc zero() { return _mm256_setzero_ps(); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static __m256 multiply_add(__m256 acc, Vec a, Vec b) { return _mm256_fmadd_ps(a, b, acc); }
  // Lanes [first, first + n) of v to to[first, first + n): vmaskps stores nothing, and faults on
  // nothing, where a lane's mask is clear.
  static void store_part(float* to, int first, int n, __m256 v) {
    _mm256_maskstore_ps(to, simd::avx2_lanes(first, first + n), v);
  }
  // 8 outputs; non-temporal when asked and the 32 bytes are aligned (Args::stream_out).
  static void store_whole(float* to, bool stream, __m256 v) {
    if (stream && reinterpret_cast<std::uintptr_t>(to) % 32 == 0)
      _mm256_stream_ps(to, v);
    else
      _mm256_storeu_ps(to, v);
  }
  static void interleave(const float* const* from, std::int64_t count, float* to) {
    std::memcpy(to, from[0], sizeof(float) * count);
  }
  // to[2 j] = even[j], to[2 j + 1] = odd[j] for the kLanes j (stride-2 phases into a dx row).
  static void zip2(const float* even, const float* odd, float* to, bool stream) {
    const __m256 e = _mm256_loadu_ps(even), o = _mm256_loadu_ps(odd);
    // Per 128-bit half: e0 o0 e1 o1 | e4 o4 e5 o5, and e2 o2 e3 o3 | e6 o6 e7 o7.
    const __m256 low = _mm256_unpacklo_ps(e, o), high = _mm256_unpackhi_ps(e, o);
    store_whole(to, stream, _mm256_permute2f128_ps(low, high, 0x20));
    store_whole(to + 8, stream, _mm256_permute2f128_ps(low, high, 0x31));
  }
};

}  // namespace

void run_avx2(const Args& a) {
  run<F32>(a);
}

}  // namespace convguard::cpu::rows_conv
