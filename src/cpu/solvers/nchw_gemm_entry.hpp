// Entry points of cpu:nchw_gemm's per-ISA kernel files (nchw_gemm_kernels.hpp). Plain structs and
// pointers only: the kernel files are compiled with their ISA's flags, and a library template
// used there could be emitted as an ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::nchw_gemm {

// Register tiles: rows of the GEMM (output channels forward, input channels backward-data) x
// columns (pixels). AVX-512 (fp32 and bf16): 8 rows x 3 vectors of 16 pixels, 24 of its 32
// registers; AVX2: 6 x 2 vectors of 8, 12 of its 16. Not inline: a const variable has internal
// linkage. 8 x 3, not 6 x 4: three whole panel loads a step instead of four (Zen 5, 2026-11-28,
// docs/perf.md "session 7"): res5a_branch1 forward bf16 0.72 -> 0.77-0.81x of oneDNN, fp32 0.75
// -> 0.83x, res4's 256 -> 1024 backward-data bf16 0.66 -> 0.75x; 64-channel 56x56 layers the same
// or up to 9% slower. The tile alone (docs/perf/2026-11-28-session7/register_tiles.cpp) moved
// less, and by how its loop compiled.
constexpr int kRowsAvx512 = 8, kColsAvx512 = 48;
constexpr int kRowsAvx2 = 6, kColsAvx2 = 16;

// One group's GEMM per image, on channels-first tensors as the caller holds them:
//   out[n][m][scatter[p]] = sum_d a[m][d] * in[n][d][gather[p]]   for every column p
// Forward: in = x, out = y, m = output channels, d = input channels, columns = output pixels.
// Backward-data: in = dy, out = dx, m = input channels, d = output channels, columns = dy's
// pixels. The kernel takes columns of several images in one tile when an image's pixels do not
// fill whole tiles (a 7x7 plane is 49 columns: two 48-column tiles, the second holding one
// column, otherwise).
// Elements are fp32 (run_avx512, run_avx2) or bf16 bits (run_bf16_avx512 with vdpbf16ps,
// run_bf16_widened_avx512 with fp32 FMAs for CPUs without AVX512_BF16; both accumulate in fp32
// and round each output once, as float_to_bfloat rounds).
struct Args {
  std::int64_t n, g;             // images, groups
  std::int64_t m, depth;         // GEMM rows and reduction length, per group
  std::int64_t columns;          // per image
  std::int64_t in_group;         // elements of `in` per (image, group)
  std::int64_t out_plane;        // elements per channel of `out`
  const std::int64_t* gather;    // per column: its first element in `in`, -1: zero
  const std::int64_t* depth_at;  // per reduction row d: its element from a column's first
  const std::int64_t* scatter;   // per column: its pixel in `out`, -1: not stored
  // > 0: depth_at[d] = d * depth_stride (1x1 layers), so a panel that is one dense run of `in`
  // can be read in place (fp32); 0: the rows are not evenly spaced.
  std::int64_t depth_stride;
  // The packed filter, [g][ceil(m / rows)][words][rows] 32-bit words, zero-padded: fp32 values
  // (words = depth; also run_bf16_widened_avx512's, widened from bf16), or bf16 pairs of
  // adjacent d for run_bf16_avx512, the lower d in the low half (words = ceil(depth / 2)).
  const void* a;
  // > 0: `a` is the caller's filter read in place, [g][m][depth] (GEMM row r of a group at r *
  // a_row_words words, its words consecutive): forward fp32, and forward bf16 of an even depth
  // (a word is then the pair (2 d2, 2 d2 + 1) as it lies). 0: `a` is packed as said above.
  std::int64_t a_row_words;
  const void* in;
  void* out;  // every element that no column scatters to must be zeroed by the caller
  // Per thread (omp_get_max_threads()): panels_per_block panels of words x cols 32-bit words.
  void* panels;
  // Panels a work item packs and sweeps with each filter row block, so that the block (words x
  // rows) is read from memory once per that many panels, not once per panel: 1 to
  // kMaxPanelsPerBlock, as many as fit a share of L2.
  std::int64_t panels_per_block;
  // `out` is larger than a few L2s (staged_solver.hpp: streams_output): whole aligned tile rows
  // are written with non-temporal stores. A plain store first reads every line it fills, and an
  // output this large is not in the core's caches when a consumer reads it anyway. In
  // convguard_bench (one call per round, 2026-11-25, AMD EPYC) the C = 3 first layers' forward
  // went from 0.40-0.41 to 0.47-0.55x of oneDNN at 224x224 and 0.47-0.51 to 0.59-0.61x at batch
  // 16; with the output warm in L3 (a driver loop) it changes nothing.
  bool stream_out;
};
// Panels one work item packs at most.
constexpr int kMaxPanelsPerBlock = 16;
// Args::panels_per_block for panels of `words` x `cols`: as many as fit in a quarter of a 1 MiB
// L2 beside the filter row block (defined in nchw_gemm.cpp, a baseline build).
std::int64_t panels_per_block(std::int64_t words, int cols);
void run_avx512(const Args& a);
void run_avx2(const Args& a);
void run_bf16_avx512(const Args& a);
void run_bf16_widened_avx512(const Args& a);  // needs AVX512BW and VL too
// Backward-data's bf16 filter w [g][depth][m] (depth = K per group, m = C per group) packed as
// Args::a says: per row block of kRowsAvx512 rows and word d2, the rows' (w[2 d2], w[2 d2 + 1])
// pairs, zero past m and past depth. Vectorised here (AVX512BW/VL): the portable loop in
// nchw_gemm.cpp took an eighth of a 512 -> 2048 7x7 layer's time.
void pack_transposed_filter_bf16(const std::uint16_t* w, std::int64_t g, std::int64_t depth,
                                 std::int64_t m, std::uint32_t* out);

// Backward-weights of a stride-1 unpadded 1x1 convolution, per chunk of images:
//   partial[chunk][grp][k][c] = sum over the chunk's images n and pixels p of
//                               dy[n][grp][k][p] * x[n][grp][c][p]
// Both operands are read in place along their pixels (the contiguous dimension), 4 rows of dy
// against 4 of x at a time with the products summed lane-wise over all the chunk's pixels; a
// lane sum is folded once per chunk. fp32 (AVX-512) or bf16 bits (vdpbf16ps over pixel pairs).
struct WeightsArgs {
  std::int64_t n, g, kg, cg;  // images, groups, channels per group
  std::int64_t plane;         // pixels per channel (x's and dy's alike)
  std::int64_t images_per_chunk;
  const void* dy;
  const void* x;
  float* partial;  // [ceil(n / images_per_chunk)][g][kg][cg]
};
void backward_weights_bf16_avx512(const WeightsArgs& a);

}  // namespace convguard::cpu::nchw_gemm
