// fp32 -> bf16 rounding in AVX-512 registers, bit-exact to float_to_bfloat (round to nearest
// even; a NaN stays a NaN, made quiet; Inf and denormals as the scalar conversion). Shared by the
// bf16 kernel files (bf16_direct_avx512.cpp, nchw_gemm_bf16_avx512.cpp); include only from files
// compiled with -mavx512f: everything here has internal linkage, so no AVX-512 copy of it can be
// picked by the linker for code that runs without AVX-512.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace convguard::cpu::avx512 {
namespace {

inline __m512i shift_right_16(__m512i x) {
  return _mm512_srli_epi32(x, 16);
}

// 16 floats rounded to bf16 bits exactly as float_to_bfloat rounds them.
inline __m256i round_to_bf16(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(shift_right_16(x), _mm512_set1_epi32(1));
  const __m512i rounded =
      shift_right_16(_mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(shift_right_16(x), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, quiet));
}

inline std::uint16_t round_one(float v) {
  return static_cast<std::uint16_t>(_mm256_extract_epi16(round_to_bf16(_mm512_set1_ps(v)), 0));
}

}  // namespace
}  // namespace convguard::cpu::avx512
