// cpu:fwd_rows's and cpu:bwdd_rows's bf16 kernel (rows_conv_kernels.hpp); compiled with -mavx512f
// -mavx512bw -mavx512vl -mavx512bf16. A window word is a pixel's pair of dy channels (k, k + 1) and
// a filter word the matching pair of weights, so one vdpbf16ps adds two channels' products per
// pixel; each dx element is rounded to bf16 once, as float_to_bfloat rounds.
#include <immintrin.h>

// GCC 12's masked stores and loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bf16_round_avx512.hpp"
#include "cpu/solvers/rows_conv_kernels.hpp"

namespace convguard::cpu::rows_conv {
namespace {

struct Bf16 {
  using T = std::uint16_t;     // dy and dx elements (bf16 bits)
  using Word = std::uint32_t;  // a channel pair, the lower channel in the low half
  using Vec = __m512bh;
  using Acc = __m512;
  static constexpr int kPerWord = 2;
  static constexpr int kLanes = 16;
  static constexpr int tile_vectors(int mr) { return tile_vectors_32_registers(mr); }
  static Acc zero() { return _mm512_setzero_ps(); }
  static Vec load(const std::uint32_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
  static Vec broadcast(const std::uint32_t* p) {
    return (__m512bh)_mm512_set1_epi32(static_cast<int>(*p));
  }
  static __m512 multiply_add(__m512 acc, Vec a, Vec b) { return _mm512_dpbf16_ps(acc, a, b); }
  // Lanes [first, first + n) of v to to[first, first + n).
  static void store_part(std::uint16_t* to, int first, int n, __m512 v) {
    _mm256_mask_storeu_epi16(to, static_cast<__mmask16>(((1u << n) - 1) << first),
                             avx512::round_to_bf16(v));
  }
  // 16 outputs; non-temporal when asked and aligned (Args::stream_out).
  static void store_whole(std::uint16_t* to, bool stream, __m512 v) {
    if (stream && reinterpret_cast<std::uintptr_t>(to) % 32 == 0)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(to), avx512::round_to_bf16(v));
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), avx512::round_to_bf16(v));
  }
  // Two channels' runs of `count` bf16 pixels into words; a missing second channel is zero.
  static void interleave(const std::uint16_t* const* from, std::int64_t count, std::uint32_t* to) {
    for (std::int64_t i = 0; i < count; ++i)
      to[i] = from[0][i] | (from[1] ? std::uint32_t{from[1][i]} << 16 : 0u);
  }
  // to[2 j] = even[j], to[2 j + 1] = odd[j] for the kLanes j (stride-2 phases into a dx row): each
  // pair one 32-bit word, even[j] in its low half (the lower address).
  static void zip2(const std::uint16_t* even, const std::uint16_t* odd, std::uint16_t* to,
                   bool stream) {
    const __m512i e =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(even)));
    const __m512i o =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(odd)));
    const __m512i pairs = _mm512_or_si512(e, _mm512_slli_epi32(o, 16));
    if (stream && reinterpret_cast<std::uintptr_t>(to) % 64 == 0)
      _mm512_stream_si512(reinterpret_cast<__m512i*>(to), pairs);
    else
      _mm512_storeu_si512(to, pairs);
  }
};

}  // namespace

void run_bf16_avx512(const Args& a) {
  run<Bf16>(a);
}

}  // namespace convguard::cpu::rows_conv
