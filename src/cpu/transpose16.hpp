// A 16 x 16 transpose of fp32 (or any 32-bit) values in AVX-512 registers, for the files compiled
// with -mavx512f only (an unnamed namespace: each such file keeps its own copy, no weak symbol).
#pragma once

#include <immintrin.h>

namespace convguard::cpu {
namespace {

// r[i] = row i of a 16 x 16 block; afterwards r[j] = its column j. Per 128-bit lane L, two
// unpack and two shuffle steps transpose each group of four rows' 4 x 4 blocks (u[4g + m] lane L
// = rows 4g..4g+3 at column 4L + m); two 128-bit lane shuffles then gather lane L of the four
// groups into one vector.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {
    u[g] = _mm512_shuffle_ps(t[g], t[g + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int m = 0; m < 4; ++m) {
    // Lanes [g0.L0, g0.L2, g1.L0, g1.L2] and [g0.L1, g0.L3, g1.L1, g1.L3]; the same for g2, g3.
    const __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 w0 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 w1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(3, 1, 3, 1));
    r[m] = _mm512_shuffle_f32x4(v0, w0, _MM_SHUFFLE(2, 0, 2, 0));       // column m (lane 0)
    r[4 + m] = _mm512_shuffle_f32x4(v1, w1, _MM_SHUFFLE(2, 0, 2, 0));   // 4 + m (lane 1)
    r[8 + m] = _mm512_shuffle_f32x4(v0, w0, _MM_SHUFFLE(3, 1, 3, 1));   // 8 + m (lane 2)
    r[12 + m] = _mm512_shuffle_f32x4(v1, w1, _MM_SHUFFLE(3, 1, 3, 1));  // 12 + m (lane 3)
  }
}

}  // namespace
}  // namespace convguard::cpu
