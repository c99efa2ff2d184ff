// The AMX and AVX-512 instructions bf16_amx.cpp uses, in scalar C++ after their definitions in
// Intel's Software Developer's Manual (TILELOADD, TILESTORED, TILEZERO, TDPBF16PS, LDTILECFG,
// TILERELEASE; VMOVDQU32 with a zeroing mask), so that the kernel's addressing (which words land
// in which tile row, which filter rows meet them, where each accumulator row is stored) is
// tested on every build machine, none of which has AMX. What it does not model: TDPBF16PS's
// flushing of denormals and its order of additions; the unit tests on an AMX CPU
// (Property.Bf16DirectOnAmx*) cover the instructions themselves.
//
// Include after <immintrin.h> and before bf16_amx.cpp: the names below replace the intrinsics.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#undef _tile_loadconfig
#undef _tile_release

namespace convguard::testing::amx {

// Eight tiles of 16 rows x 64 bytes (the kernel's palette-1 configuration), per thread as the
// hardware's tile registers are.
inline thread_local unsigned char tiles[8][16][64];

inline float bf16_value(std::uint16_t bits) {
  const std::uint32_t u = std::uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline void load(int t, const void* base, long stride) {
  for (int r = 0; r < 16; ++r)
    std::memcpy(tiles[t][r], static_cast<const char*>(base) + r * stride, 64);
}

inline void store(int t, void* base, long stride) {
  for (int r = 0; r < 16; ++r) std::memcpy(static_cast<char*>(base) + r * stride, tiles[t][r], 64);
}

// C[m][n] += sum over k of A[m][2k] B[k][2n] + A[m][2k+1] B[k][2n+1] (bf16 pairs, fp32 C).
inline void dpbf16ps(int c, int a, int b) {
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float acc;
      std::memcpy(&acc, &tiles[c][m][4 * n], 4);
      for (int k = 0; k < 16; ++k) {
        std::uint16_t a0, a1, b0, b1;
        std::memcpy(&a0, &tiles[a][m][4 * k], 2);
        std::memcpy(&a1, &tiles[a][m][4 * k + 2], 2);
        std::memcpy(&b0, &tiles[b][k][4 * n], 2);
        std::memcpy(&b1, &tiles[b][k][4 * n + 2], 2);
        acc += bf16_value(a0) * bf16_value(b0) + bf16_value(a1) * bf16_value(b1);
      }
      std::memcpy(&tiles[c][m][4 * n], &acc, 4);
    }
}

struct Words {
  std::uint32_t w[16];
};

// Masked-off words are neither read (no fault past a buffer) nor kept (zero).
inline Words maskz_load(unsigned mask, const void* p) {
  Words v{};
  for (int i = 0; i < 16; ++i)
    if (mask >> i & 1) std::memcpy(&v.w[i], static_cast<const char*>(p) + 4 * i, 4);
  return v;
}

inline void store_words(void* p, const Words& v) {
  std::memcpy(p, v.w, sizeof v.w);
}

}  // namespace convguard::testing::amx

#define _tile_loadd(t, base, stride) ::convguard::testing::amx::load(t, base, stride)
#define _tile_stored(t, base, stride) ::convguard::testing::amx::store(t, base, stride)
#define _tile_zero(t) std::memset(::convguard::testing::amx::tiles[t], 0, 1024)
#define _tile_dpbf16ps(c, a, b) ::convguard::testing::amx::dpbf16ps(c, a, b)
#define _tile_loadconfig(config) (void)(config)
#define _tile_release() (void)0
#define _mm512_maskz_loadu_epi32(mask, p) ::convguard::testing::amx::maskz_load(mask, p)
#define _mm512_storeu_si512(p, v) ::convguard::testing::amx::store_words(p, v)
