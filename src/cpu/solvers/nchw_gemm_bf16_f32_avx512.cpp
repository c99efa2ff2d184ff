// cpu:nchw_gemm:avx512 on bf16 tensors, for CPUs without AVX512_BF16 (Intel before Cooper Lake,
// e.g. Ice Lake servers): the caller's bf16 x and y are read and written in place, each panel
// element widened to fp32 as it is packed (a bf16 value is an fp32's upper half), the fp32 tile
// of nchw_gemm_kernels.hpp run on it, each output rounded to bf16 once. Staging the tensors to
// fp32 instead cost a third more than the fp32 problem (2026-11-29, Xeon Ice Lake, docs/perf.md).
// Compiled with -mavx512f -mavx512bw -mavx512vl -mfma.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

// GCC 12's AVX-512 intrinsics pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/nchw_gemm_bf16_store.hpp"
#include "cpu/solvers/nchw_gemm_kernels.hpp"

namespace convguard::cpu::nchw_gemm {
namespace {

struct Bf16Widened {
  using T = std::uint16_t;
  using Word = float;
  using Tile = F32<16>;
  static constexpr int kRows = Tile::kRows, kCols = Tile::kCols, NV = Tile::NV;

  static constexpr bool kReadsInPlace = false;  // every element is widened by the packing
  static std::int64_t words(std::int64_t depth) { return depth; }
  static void store_row(const float* from, std::uint16_t* to, int len, std::int64_t step) {
    store_bf16_row(from, to, len, step);
  }

  // n <= 16 elements of a run of step 1 or 2 from p, widened: a bf16 value shifted into the upper
  // half of a 32-bit lane is that value in fp32. Step 2 loads the 2n - 1 elements up to the last
  // (masked: nothing past it, which may be the tensor's last) as 32-bit lanes; the shift drops
  // each lane's upper (odd) element.
  static __m512 widen(const T* p, std::int64_t step, int n) {
    if (step == 1) {
      const auto m = static_cast<__mmask16>((1u << n) - 1);
      return _mm512_castsi512_ps(
          _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
    }
    const auto m = static_cast<__mmask32>((1u << (2 * n - 1)) - 1);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_maskz_loadu_epi16(m, p), 16));
  }

  static void pack(float* b, const Run<T>* runs, int count, std::int64_t depth,
                   const std::int64_t* at) {
    for (std::int64_t d = 0; d < depth; ++d) {
      float* row = b + d * kCols;
      for (int r = 0; r < count; ++r) {
        const Run<T>& u = runs[r];
        float* to = row + u.j0;
        if (!u.p) {
          std::memset(to, 0, sizeof(float) * u.len);
          continue;
        }
        const T* from = u.p + at[d];
        if (u.step <= 2) {
          // The next panel's columns of this row (if the run goes on there): hundreds of rows
          // are too many streams for the hardware prefetchers (nchw_gemm_bf16_avx512.cpp).
          for (std::int64_t l = 0; l < kCols * u.step * 2; l += 64)
            _mm_prefetch(reinterpret_cast<const char*>(from + kCols * u.step) + l, _MM_HINT_T1);
          for (int i = 0; i < u.len; i += 16) {
            const int n = std::min(16, u.len - i);
            _mm512_mask_storeu_ps(to + i, static_cast<__mmask16>((1u << n) - 1),
                                  widen(from + i * u.step, u.step, n));
          }
          continue;
        }
        for (int i = 0; i < u.len; ++i) {
          const std::uint32_t bits = std::uint32_t{from[i * u.step]} << 16;
          std::memcpy(to + i, &bits, sizeof bits);
        }
      }
    }
  }

  using Rows = FilterRows<float, kRows>;
  using Acc = Tile::vf;
  template <int NU = NV>
  [[gnu::always_inline]] static void accumulate(const Rows& a, const float* b, std::int64_t ldb,
                                                std::int64_t depth, Acc (&acc)[kRows][NV],
                                                const float* init = nullptr) {
    Tile::template accumulate<NU>(a, b, ldb, depth, acc, init);
  }
  [[gnu::noinline]] static void tile(const Rows& a, const float* b, std::int64_t ldb,
                                     std::int64_t depth, std::uint16_t* out, std::int64_t ldo,
                                     int rows, bool stream) {
    Tile::vf acc[kRows][NV];
    Tile::accumulate(a, b, ldb, depth, acc);
    store_bf16_tile(acc, out, ldo, rows, stream);
  }
  static void tile_f32(const Rows& a, const float* b, std::int64_t ldb, std::int64_t depth,
                       float* out, std::int64_t ldo, int rows) {
    Tile::tile(a, b, ldb, depth, out, ldo, rows);
  }
};

}  // namespace

void run_bf16_widened_avx512(const Args& a) {
  run<Bf16Widened>(a);
}

}  // namespace convguard::cpu::nchw_gemm
