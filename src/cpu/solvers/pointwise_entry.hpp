// Entry points of cpu:pointwise's per-ISA kernel files (pointwise_kernels.hpp). Plain structs and
// pointers only: the kernel files are compiled with their ISA's flags, and a library template
// used there could be emitted as an ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::pointwise {

// Register tiles: rows of the GEMM (output channels forward, input channels backward-data) x
// columns (pixels). AVX-512: 8 rows x 3 vectors of 16 pixels, 24 of its 32 registers; AVX2: 6 x 2
// vectors of 8, 12 of its 16. Not inline: a const variable has internal linkage.
constexpr int kRowsAvx512 = 8, kColsAvx512 = 48;
constexpr int kRowsAvx2 = 6, kColsAvx2 = 16;

// One group's GEMM per image, on channels-first tensors as the caller holds them:
//   out[n][m][scatter[p]] = sum_d a[m][d] * in[n][d][gather[p]]   for every column p
// Forward: in = x, out = y, m = output channels, d = input channels, columns = output pixels.
// Backward-data: in = dy, out = dx, m = input channels, d = output channels, columns = dy's
// pixels. The kernel takes columns of several images in one tile when an image's pixels do not
// fill whole tiles (a 7x7 plane is 49 columns: one 48-column tile and one of 1, otherwise).
struct Args {
  std::int64_t n, g;            // images, groups
  std::int64_t m, depth;        // GEMM rows and reduction length, per group
  std::int64_t columns;         // per image
  std::int64_t in_plane;        // floats per channel of `in` (its pixels)
  std::int64_t out_plane;       // floats per channel of `out`
  const std::int64_t* gather;   // per column: its pixel in `in`, -1: zero
  const std::int64_t* scatter;  // per column: its pixel in `out`, -1: not stored
  const float* a;               // the packed filter: [g][ceil(m / rows)][depth][rows], zero-padded
  const float* in;
  float* out;     // every element of it that no column scatters to must be zeroed by the caller
  float* panels;  // per thread (omp_get_max_threads()): depth * cols floats
};
void run_avx512(const Args& a);
void run_avx2(const Args& a);

}  // namespace convguard::cpu::pointwise
