// Vector helpers shared by the per-ISA kernel headers (implicit_gemm_kernels.hpp,
// bwdw_kernels.hpp), generic over the vector width W (floats). Include only from files compiled
// with that ISA's flags: everything here has internal linkage, so no ISA-specific copy of an
// inline function can be picked by the linker for code that runs on a CPU without that ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace convguard::cpu::simd {
namespace {

inline std::int64_t lesser(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

template <int W>
struct Vec {
  typedef float type __attribute__((vector_size(W * sizeof(float))));
};

template <int W>
[[gnu::always_inline]] inline typename Vec<W>::type load(const float* p) {
  typename Vec<W>::type v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Broadcast of *p as a load-broadcast (vbroadcastss from memory: a load-port uop). The generic
// `vf{} + *p` adds 0.0 (not foldable because of -0.0) and broadcasts from a register, a shuffle
// that competes with the FMAs for port 5 on AVX-512 cores (measured: 150 vs 280 GFLOP/s);
// a lane-by-lane loop is worse still (masked broadcasts, spilled accumulators).
template <int W>
[[gnu::always_inline]] inline typename Vec<W>::type broadcast(const float* p) {
  if constexpr (W == 16) {
    return reinterpret_cast<typename Vec<W>::type>(_mm512_set1_ps(*p));
  } else {
    return reinterpret_cast<typename Vec<W>::type>(_mm256_set1_ps(*p));
  }
}

// The mask of AVX2's masked loads and stores (vmaskmovps, vpmaskmovd) for lanes [first, end) of
// 8: those lanes' bits set, the others clear. A clear lane is neither read nor written, and does
// not fault, so a row's tail can be loaded or stored at its end of a buffer.
[[gnu::always_inline]] inline __m256i avx2_lanes(int first, int end) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(first - 1)),
                          _mm256_cmpgt_epi32(_mm256_set1_epi32(end), lane));
}

}  // namespace
}  // namespace convguard::cpu::simd
