// Entry point of cpu:bwdd_rows's AVX-512 kernel file (bwdd_rows_avx512.cpp). Plain structs and
// pointers only: the kernel file is compiled with -mavx512f, and a library template used there
// could be emitted as an ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::bwdd_rows {

// Stride-1 backward-data as a forward pass over dy, zero-padded so that every input pixel's
// window lies inside it, with the filter flipped and its channel roles swapped:
//   dx[n][grp][c][r][iw] = sum over reduction rows j of w[grp][c block][j][c] *
//                          dy[n][grp][dy_row(r) + tap_at[j] + iw]
// where r runs over dx's (id, ih) rows of image n and j = (k, flipped tap) over kg x taps.
struct Args {
  std::int64_t n, g, cg, depth;       // images, groups, dx channels per group, reduction rows
  std::int64_t id, ih, iw;            // dx sizes
  std::int64_t dy_group;              // elements of the padded dy per (image, group)
  std::int64_t dy_step_d, dy_step_h;  // padded dy elements between consecutive id and ih
  const std::int64_t* tap_at;         // per reduction row j: its offset from dy_row(r)
  const float* dy;
  // The flipped filter as [g][ceil(cg / 6)][depth][6] floats, zero past cg.
  const float* w;
  float* dx;  // [n][g][cg][id][ih][iw], every element written
};
// Channels a filter block holds (the most rows a register tile has).
constexpr int kBlockChannels = 6;
void run_avx512(const Args& a);

}  // namespace convguard::cpu::bwdd_rows
