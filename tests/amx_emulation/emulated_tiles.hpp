// The AMX and AVX-512 instructions bf16_amx.cpp uses, in scalar C++ after their definitions in
// Intel's Software Developer's Manual (TILELOADD, TILESTORED, TILEZERO, TDPBF16PS, LDTILECFG with
// each tile's rows and bytes per row, TILERELEASE; VMOVDQU32 with a zeroing mask), so that the
// kernel's addressing (which words land in which tile row, which filter rows meet them, where each
// accumulator row is stored, what a tile of fewer rows reads and writes) is tested on every build
// machine, none of which has AMX. What it does not model: TDPBF16PS's flushing of denormals and
// its order of additions; the unit tests on an AMX CPU (Property.Bf16DirectOnAmx*) cover the
// instructions themselves.
//
// Include after <immintrin.h> and before bf16_amx.cpp: the names below replace the intrinsics.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#undef _tile_loadconfig
#undef _tile_release

namespace convguard::testing::amx {

// Eight tiles of at most 16 rows x 64 bytes (palette 1), per thread as the hardware's tile
// registers are, with the rows and bytes per row LDTILECFG set for each.
inline thread_local unsigned char tiles[8][16][64];
inline thread_local int tile_rows[8], tile_bytes[8];
inline thread_local bool configured = false;

// Any tile instruction without a configuration (none yet, or after TILERELEASE) is #UD.
inline void require_configured() {
  if (!configured) std::abort();
}

// TILERELEASE: the tiles return to their initial state, unconfigured.
inline void release() {
  configured = false;
  for (int t = 0; t < 8; ++t) tile_rows[t] = tile_bytes[t] = 0;
  std::memset(tiles, 0, sizeof tiles);
}

// LDTILECFG's 64-byte operand: palette at byte 0, bytes per row (16-bit) at 16 + 2t, rows at
// 48 + t. Loading a configuration zeroes every tile.
inline void load_config(const void* config) {
  const auto* c = static_cast<const unsigned char*>(config);
  for (int t = 0; t < 8; ++t) {
    std::uint16_t bytes;
    std::memcpy(&bytes, c + 16 + 2 * t, 2);
    tile_bytes[t] = bytes;
    tile_rows[t] = c[48 + t];
  }
  configured = true;
  std::memset(tiles, 0, sizeof tiles);
}

inline float bf16_value(std::uint16_t bits) {
  const std::uint32_t u = std::uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// TILELOADD reads the configured rows and bytes and zeroes the rest of the tile; TILESTORED
// writes the configured rows and bytes only.
inline void load(int t, const void* base, long stride) {
  require_configured();
  std::memset(tiles[t], 0, sizeof tiles[t]);
  for (int r = 0; r < tile_rows[t]; ++r)
    std::memcpy(tiles[t][r], static_cast<const char*>(base) + r * stride,
                static_cast<std::size_t>(tile_bytes[t]));
}

inline void store(int t, void* base, long stride) {
  require_configured();
  for (int r = 0; r < tile_rows[t]; ++r)
    std::memcpy(static_cast<char*>(base) + r * stride, tiles[t][r],
                static_cast<std::size_t>(tile_bytes[t]));
}

inline void zero(int t) {
  require_configured();
  std::memset(tiles[t], 0, sizeof tiles[t]);
}

// C[m][n] += sum over k of A[m][2k] B[k][2n] + A[m][2k+1] B[k][2n+1] (bf16 pairs, fp32 C), with
// M = C's rows, N = C's bytes / 4, K = A's bytes / 4; the SDM's #UD conditions (A's rows not M,
// B's rows not K, B's bytes not C's) end the test.
inline void dpbf16ps(int c, int a, int b) {
  require_configured();
  const int M = tile_rows[c], N = tile_bytes[c] / 4, K = tile_bytes[a] / 4;
  if (tile_rows[a] != M || tile_rows[b] != K || tile_bytes[b] != tile_bytes[c]) std::abort();
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float acc;
      std::memcpy(&acc, &tiles[c][m][4 * n], 4);
      for (int k = 0; k < K; ++k) {
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
#define _tile_zero(t) ::convguard::testing::amx::zero(t)
#define _tile_dpbf16ps(c, a, b) ::convguard::testing::amx::dpbf16ps(c, a, b)
#define _tile_loadconfig(config) ::convguard::testing::amx::load_config(config)
#define _tile_release() ::convguard::testing::amx::release()
#define _mm512_maskz_loadu_epi32(mask, p) ::convguard::testing::amx::maskz_load(mask, p)
#define _mm512_storeu_si512(p, v) ::convguard::testing::amx::store_words(p, v)
