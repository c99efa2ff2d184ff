// How cpu:nchw_gemm's two bf16 policies write their fp32 sums as bf16: the vdpbf16ps one
// (nchw_gemm_bf16_avx512.cpp) and the one that widens bf16 to fp32 for CPUs without AVX512_BF16
// (nchw_gemm_bf16_f32_avx512.cpp). Include only from files compiled with -mavx512f -mavx512bw
// -mavx512vl: internal linkage, so no AVX-512 copy can be picked for code that runs without it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu/solvers/bf16_round_avx512.hpp"

namespace convguard::cpu::nchw_gemm {
namespace {

// A run of a tile row, `len` outputs `step` apart: whole vectors rounded in registers (a panel
// spanning two 7x7 images stores every row this way), the rest one by one. Step 2 (a stride-2
// 1x1 backward-data's dx row, or two output channels' 1x1 planes of consecutive images) stores
// the even 16-bit lanes only: the elements between are someone else's.
inline void store_bf16_row(const float* from, std::uint16_t* to, int len, std::int64_t step) {
  int i = 0;
  if (step == 1) {
    for (; i + 16 <= len; i += 16)
      _mm256_storeu_si256((__m256i*)(to + i), avx512::round_to_bf16(_mm512_loadu_ps(from + i)));
  } else if (step == 2) {
    for (; i < len; i += 16) {
      const int n = std::min(16, len - i);
      const __m512 v = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), from + i);
      const __m512i pairs = _mm512_cvtepu16_epi32(avx512::round_to_bf16(v));
      _mm512_mask_storeu_epi16(
          to + 2 * i, static_cast<__mmask32>(0x55555555u & ((1u << (2 * n - 1)) - 1)), pairs);
    }
  }
  for (; i < len; ++i) to[i * step] = avx512::round_one(from[i]);
}

// A register tile's rows r < rows of NV vectors each, rounded, to out (rows ldo apart);
// non-temporal where the rows are whole aligned vectors and `stream` says so (Args::stream_out).
// V: __m512 or simd::Vec<16>::type (the same 64 bytes).
template <class V, int Rows, int NV>
[[gnu::always_inline]] inline void store_bf16_tile(const V (&acc)[Rows][NV], std::uint16_t* out,
                                                   std::int64_t ldo, int rows, bool stream) {
  static_assert(sizeof(V) == sizeof(__m512));
  if (stream && reinterpret_cast<std::uintptr_t>(out) % 32 == 0 && ldo % 16 == 0) {
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < NV; ++v)
        _mm256_stream_si256((__m256i*)(out + r * ldo + v * 16),
                            avx512::round_to_bf16(reinterpret_cast<__m512>(acc[r][v])));
    return;
  }
  for (int r = 0; r < rows; ++r)
    for (int v = 0; v < NV; ++v)
      _mm256_storeu_si256((__m256i*)(out + r * ldo + v * 16),
                          avx512::round_to_bf16(reinterpret_cast<__m512>(acc[r][v])));
}

}  // namespace
}  // namespace convguard::cpu::nchw_gemm
