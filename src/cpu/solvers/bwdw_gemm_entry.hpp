// Entry points of cpu:bwdw_gemm's AVX-512 and AVX2 kernel files (bwdw_gemm_kernels.hpp). Plain
// structs and pointers only: the kernel files are compiled with their ISA's flags, and a library
// template used there could be emitted as an ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::bwdw_gemm {

// Backward-weights on dense channels-first x and dy as a GEMM whose reduction runs over the output
// pixels of every image:
//   partial[chunk][grp][k][c * taps + t] = sum over the chunk's (image n, word w) of
//                                          dy[n][grp][k][word w] . x[n][grp][c][word w + tap_at[t]]
// dy's plane is `plane` pixels and x's `x_plane`; x's pixel for dy's pixel q and tap t is q +
// tap_at[t] (1x1: x is dy-shaped, one tap at 0; beyond, x is zero-padded and dy re-pitched to
// its row length, so that every tap is one shift). `valid` (null: all) marks the pixels of dy's
// plane that are real outputs; x is read as zero at the others (a re-pitched row's tail, which
// dy holds as zero). A word is one pixel (fp32) or a pair of adjacent pixels (bf16, whose
// vdpbf16ps adds both products; an odd plane's last word is its last pixel alone). The
// reduction, the images' words in order, is cut into chunks of chunk_words words fixed by the
// problem.
struct Args {
  std::int64_t n, g, kg, cg;   // images, groups, channels per group
  std::int64_t taps;           // per channel: the panel's columns are (c, t), cg * taps of them
  const std::int64_t* tap_at;  // per tap (null: one tap at 0)
  std::int64_t plane;          // dy's pixels per channel
  std::int64_t x_plane;        // x's elements per channel
  // Bit q: dy's pixel q is an output (null: every one). Readable 8 bytes past bit plane - 1.
  const std::uint64_t* valid;
  const void* x;  // fp32, or bf16 bits (run_bf16_avx512)
  const void* dy;
  std::int64_t chunk_words;
  float* partial;  // [chunks][g][kg][cg * taps]
  // Per thread (omp_get_max_threads()): a panel of chunk_words x kPanelColumns 32-bit words.
  void* panels;
};
constexpr int kPanelColumns = 64;
void run_avx512(const Args& a);
void run_avx2(const Args& a);
void run_bf16_avx512(const Args& a);

}  // namespace convguard::cpu::bwdw_gemm
