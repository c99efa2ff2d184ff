// transpose.hpp's AVX-512 transpose; compiled with -mavx512f (no library templates here).
#include <immintrin.h>

#include "cpu/transpose.hpp"

// GCC 12's AVX-512 intrinsics pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/transpose16.hpp"

namespace convguard::cpu {

void transpose_f32_avx512(const float* src, std::int64_t src_row, float* dst, std::int64_t dst_row,
                          std::int64_t rows, std::int64_t cols) {
  const std::int64_t R16 = rows / 16 * 16, C16 = cols / 16 * 16;
  for (std::int64_t i = 0; i < R16; i += 16)
    for (std::int64_t j = 0; j < C16; j += 16) {
      __m512 r[16];
      for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(src + (i + k) * src_row + j);
      transpose16(r);
      for (int k = 0; k < 16; ++k) _mm512_storeu_ps(dst + (j + k) * dst_row + i, r[k]);
    }
  // The ragged edges one by one.
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = i < R16 ? C16 : 0; j < cols; ++j)
      dst[j * dst_row + i] = src[i * src_row + j];
}

}  // namespace convguard::cpu
