// Entry points of cpu:bwdw_rows's AVX-512 and AVX2 kernel files (bwdw_rows_kernels.hpp). Plain
// structs and pointers only: each kernel file is compiled with its ISA's flags, and a library
// template used there could be emitted as an ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::bwdw_rows {

// Backward-weights on channels-first x (zero-padded, and split into sw column phases when the
// width stride sw > 1, so that every tap's inputs along an output row are one contiguous run) and
// channels-first dy, per chunk of output rows:
//   partial[chunk][grp][k][j] = sum over the chunk's output rows r and columns ow of
//                               dy[row r of (grp, k)][ow] * x[x_row(r) + tap_at[j] + ow]
// where j = c * taps + tap is a filter column of the group (its channel and its tap), r runs over
// the n, od, oh of the output flattened, and x_row(r) is the first element of that row's windows
// relative to its image and group.
struct Args {
  std::int64_t n, g, kg, columns;   // images, groups, output channels and filter columns per group
  std::int64_t od, oh, ow;          // output sizes
  std::int64_t x_group;             // elements of x per (image, group)
  std::int64_t x_step_d, x_step_h;  // x elements between consecutive od and oh
  const std::int64_t* tap_at;       // per filter column j: its offset from x_row(r)
  const void* x;                    // fp32, or bf16 bits (run_bf16_avx512)
  const void* dy;
  std::int64_t rows_per_chunk;  // output rows per chunk (fixed by the problem)
  float* partial;               // [chunks][g][kg][columns]
  // Per thread (omp_get_max_threads()), kLaneSumFloats each, 64-byte aligned: a work item's tiles'
  // lane sums between blocks (48 KB: kept off the stack of a caller's thread).
  float* lane_sums;
};
// A work item's lane sums at most: 4 x 8 register tiles of 4 x 6 vectors of 16 lanes (AVX-512;
// AVX2's 3 x 4 vectors of 8 lanes use a quarter of it).
constexpr std::int64_t kLaneSumFloats = 4 * 8 * 4 * 6 * 16;
void run_avx512(const Args& a);
void run_avx2(const Args& a);
void run_bf16_avx512(const Args& a);

}  // namespace convguard::cpu::bwdw_rows
