// Entry points of cpu:bwdw_gemm's AVX-512 kernel files (bwdw_gemm_kernels.hpp). Plain structs and
// pointers only: the kernel files are compiled with their ISA's flags, and a library template used
// there could be emitted as an ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::bwdw_gemm {

// Backward-weights of a 1x1, stride-1, unpadded convolution on dense channels-first x and dy, as a
// GEMM whose reduction runs over the pixels of every image:
//   partial[chunk][grp][k][c] = sum over the chunk's (image n, word w) of
//                               dy[n][grp][k][word w] . x[n][grp][c][word w]
// A word is one pixel (fp32) or a pair of adjacent pixels (bf16, whose vdpbf16ps adds both
// products; an odd plane's last word is its last pixel alone). The reduction, the images' words
// in order, is cut into chunks of chunk_words words fixed by the problem.
struct Args {
  std::int64_t n, g, kg, cg;  // images, groups, channels per group
  std::int64_t plane;         // pixels per channel plane (x's and dy's alike)
  const void* x;              // fp32, or bf16 bits (run_bf16_avx512)
  const void* dy;
  std::int64_t chunk_words;
  float* partial;  // [chunks][g][kg][cg]
  // Per thread (omp_get_max_threads()): a panel of chunk_words x kPanelColumns 32-bit words.
  void* panels;
};
constexpr int kPanelColumns = 64;
void run_avx512(const Args& a);
void run_bf16_avx512(const Args& a);

}  // namespace convguard::cpu::bwdw_gemm
