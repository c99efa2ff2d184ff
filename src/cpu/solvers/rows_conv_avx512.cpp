// cpu:fwd_rows's and cpu:bwdd_rows's fp32 kernel (rows_conv_kernels.hpp); compiled with -mavx512f
// -mfma.
#include <immintrin.h>

// GCC 12's masked stores and loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/rows_conv_kernels.hpp"

namespace convguard::cpu::rows_conv {
namespace {

struct F32 {
  using T = float;     // dy and dx elements
  using Word = float;  // window and filter words
  using Vec = __m512;
  using Acc = __m512;
  static constexpr int kPerWord = 1;
  static constexpr int kLanes = 16;
  static constexpr int tile_vectors(int mr) { return tile_vectors_32_registers(mr); }
  static Acc zero() { return _mm512_setzero_ps(); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static __m512 multiply_add(__m512 acc, Vec a, Vec b) { return _mm512_fmadd_ps(a, b, acc); }
  // Lanes [first, first + n) of v to to[first, first + n).
  static void store_part(float* to, int first, int n, __m512 v) {
    _mm512_mask_storeu_ps(to, static_cast<__mmask16>(((1u << n) - 1) << first), v);
  }
  // 16 outputs; non-temporal when asked and the line is aligned (Args::stream_out).
  static void store_whole(float* to, bool stream, __m512 v) {
    if (stream && reinterpret_cast<std::uintptr_t>(to) % 64 == 0)
      _mm512_stream_ps(to, v);
    else
      _mm512_storeu_ps(to, v);
  }
  static void interleave(const float* const* from, std::int64_t count, float* to) {
    std::memcpy(to, from[0], sizeof(float) * count);
  }
  // to[2 j] = even[j], to[2 j + 1] = odd[j] for the kLanes j (stride-2 phases into a dx row).
  static void zip2(const float* even, const float* odd, float* to, bool stream) {
    const __m512 e = _mm512_loadu_ps(even), o = _mm512_loadu_ps(odd);
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    store_whole(to, stream, _mm512_permutex2var_ps(e, lo, o));
    store_whole(to + 16, stream, _mm512_permutex2var_ps(e, hi, o));
  }
};

}  // namespace

void run_avx512(const Args& a) {
  run<F32>(a);
}

}  // namespace convguard::cpu::rows_conv
