// The register tile of cpu:nchw_gemm alone (MR filter rows broadcast x NV panel vectors, `words`
// reduction steps, operands in L1, one core), to compare tile shapes on this CPU. Not built by
// CMake: a measurement kept beside the figures it produced (docs/perf.md, 2026-11-28).
//   g++ -O2 -DMR=8 -DNV=3 [-DF32] -mavx512f -mavx512bf16 -mavx512bw -mavx512vl \
//       register_tiles.cpp -o tiles && ./tiles 32 && ./tiles 512
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// `step` between a filter row's words is a run-time value, as in the kernel (FilterRows::step).
__attribute__((noinline)) void tile(const std::uint32_t* const* rows, long step,
                                    const std::uint32_t* b, long ldb, long words, std::uint16_t* out,
                                    long ldo) {
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (long d = 0; d < words; ++d) {
    __m512i bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + d * ldb + v * 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      std::uint32_t w;
      std::memcpy(&w, rows[r] + d * step, 4);
      const __m512i s = _mm512_set1_epi32(static_cast<int>(w));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
#ifdef F32
        acc[r][v] = _mm512_fmadd_ps((__m512)s, (__m512)bv[v], acc[r][v]);
#else
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)s, (__m512bh)bv[v]);
#endif
      }
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      _mm256_storeu_si256((__m256i*)(out + r * ldo + v * 16), (__m256i)_mm512_cvtneps_pbh(acc[r][v]));
}

int main(int argc, char** argv) {
  const long words = argc > 1 ? std::atol(argv[1]) : 32;
  auto* a = static_cast<std::uint32_t*>(std::aligned_alloc(64, 12 * 4096 * 4));
  auto* b = static_cast<std::uint32_t*>(std::aligned_alloc(64, 4096 * 64 * 4));
  auto* out = static_cast<std::uint16_t*>(std::aligned_alloc(64, 12 * 64 * 2 * 16));
  for (long i = 0; i < 12 * 4096; ++i) a[i] = 0x3f803f80u;
  for (long i = 0; i < 4096 * 64; ++i) b[i] = 0x3c003c00u;
  const std::uint32_t* rows[12];
  for (int r = 0; r < 12; ++r) rows[r] = a + r * 4096;
  const long calls = 20000000 / words;
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long it = 0; it < calls; ++it) tile(rows, 1, b, 64, words, out, 64);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
#ifdef F32
  const double per_lane = 2;  // one multiply-add
#else
  const double per_lane = 4;  // two bf16 products and their sums
#endif
  std::printf("%dx%d, %ld words: %.1f GFLOP/s\n", MR, NV, words,
              calls * words * MR * NV * 16 * per_lane / best / 1e9);
}
