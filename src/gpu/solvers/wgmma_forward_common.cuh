// gpu:wgmma_implicit_gemm's kernels (wgmma_implicit_gemm.cu: the two-warpgroup kernel that loads
// its own stages; wgmma_ws_forward.cuh: the warp-specialised one): tile constants, the launch
// arguments, the swizzle and the staged epilogue they share. Included by wgmma_implicit_gemm.cu
// alone (sm_90a code).
#pragma once

#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu::wgf {

// Tiles are BM pixels (128 or 256) x BN channels (64 or 128; 256 with 128 pixels), computed by two
// warpgroups of BM / 2 rows each (one or two m64 wgmma per k16 step); a tile row holds kBK = 64
// reduction elements (kChunks 16-byte chunks: one 128-byte swizzle row). Stages: 128 x 64 takes 4
// (96 KiB: two blocks per SM interleave their waits, measured faster than 9 stages in one block);
// the others as many as a block's 227 KiB hold (one block per SM: 7 for 128 x 128, measured 2-7%
// faster than 5 on ResNet-50's layers, v3/variants.txt).
constexpr int kChunks = 8, kBK = 64, kThreads = 256, kRowBytes = 128;
// Per element type: a 16-byte chunk's elements and a stage row's reduction elements (kBK for the
// 16-bit types; f32, the TF32 variant: 4 and 32, the same bytes and swizzle).
template <typename T>
constexpr int kVecOf = 16 / static_cast<int>(sizeof(T));
template <typename T>
constexpr int kBKOf = kRowBytes / static_cast<int>(sizeof(T));
template <int BM, int BN>
constexpr int kStageBytes = (BM + BN) * kRowBytes;
template <int BM, int BN>
constexpr int kStages = BM + BN == 192 ? 4 : (227 * 1024 - 1024) / kStageBytes<BM, BN>;
template <int BM, int BN, int S>
constexpr int kSmemBytes = S* kStageBytes<BM, BN> + 1024;  // + slack to align
// Two blocks per SM (the plan's per_sm, wgmma_tiles.cuh): as many stages as let two blocks fit in
// an SM's 228 KiB of shared memory, each block's also holding its 1 KiB of alignment slack and the
// 1 KiB the hardware reserves per block (128 x 128: 3 stages, 97 KiB). Such a kernel
// (kMinBlocks 2) is launched through an entry whose launch bounds ask for two blocks, capping it
// at 128 registers a thread: two blocks of 256 threads fill the 64 K registers.
template <int BM, int BN>
constexpr int kStagesTwoPerSm = (114 * 1024 - 2 * 1024) / kStageBytes<BM, BN>;
template <int BM, int BN, int S>
constexpr int kMinBlocks = BM* BN >= 128 * 128 && 2 * (kSmemBytes<BM, BN, S> + 1024) <= 228 * 1024
                               ? 2
                               : 1;

struct WgArgs {
  const void* x;
  const void* w;
  void* y;
  int h, w_, c, k, sh, sw, dh, dw;
  int cp;  // c rounded up to a chunk (kVecOf<T> elements; c when aligned)
  int oh, ow, r, s, ph, pw;
  int m, kd, wrow;      // GEMM M, reduction r*s*cp, filter row r*s*c
  int tiles_per_split;  // reduction tiles per blockIdx.z
  float* partial;       // split-K: fp32 partial sums [split][m][k]; null: y directly
  // Backward-data with kFilterMn (the caller's KRSC filter as B, no flipped copy): w's row per dy
  // channel (R*S*C elements), and how far the filter's tap moves back per GEMM tap row and column
  // (the flip: GEMM tap (r, s) of a phase is w's tap at w_off - r * b_dr - s * b_ds, w_off being
  // its tap (0, 0)'s offset, elements).
  int b_krow, b_dr, b_ds;
  // Strided backward-data (0: not phased): blockIdx.z is the stride phase, whose geometry (dy's
  // pixels it reads, its sub-filter in the workspace) replaces oh .. wrow, and whose pixels land
  // on y's stride grid (tc::stride_phases).
  int phases, yh, yw, sh_y, sw_y;
  tc::Geo phase[tc::kMaxPhases];
  tc::Depth depth;  // a 3D problem's (the k3D kernel: r counts the tap rows T * R)
  // Strided 3D backward-data (phased k3D kernel): as tc::Args'.
  tc::PhaseDepth phase_depth[tc::kMaxPhases];
  int yd, sd_y;
  // The order of the output tiles (tile_order): 0, M tiles fastest (the grid's x, the order the
  // hardware launches blocks in); 1, N tiles fastest, so that the blocks running at once share
  // their A rows (x's pixels) through L2 rather than each N tile reading them from memory again.
  // Unphased, unclustered plans only.
  int n_fast;
  // The bulk-copy loaders read x as a plain [pixels][C] matrix by tiled copies instead of im2col
  // ones: forward 1x1 filters at stride 1 without padding, whose im2col walk is the identity
  // (WgPlan; CONVGUARD_WGMMA_IM2COL=1 keeps the im2col copies). Measured on the H200 against the
  // im2col copies, interleaved (docs/gpu/2026-11-28-pixel-wide/plain): ResNet-50 b32 forward
  // 1.023x (res5[b-c]_branch2a 1.17x, res4[b-f]_branch2a 1.15x), b256 1.012x; backward-data's dy
  // (stride 1, its 1x1 layers) 0.996x, so it keeps them.
  int plain_x;
  // The persistent bulk-copy kernel (unphased, unsplit) stores its tiles by bulk tensor copies
  // through the map ActivationMaps::y (store_bulk in wgmma_ws_forward.cuh), y a plain [m][k]
  // matrix of whole 16-byte chunks a row; 0: through store_staged. The plan's choice
  // (WgPlan::bulk_stores); launch_bulk_copies encodes the map.
  int bulk_store;
  // The bulk-copy kernel's splits (ws 4, kSplit) run as one thread-block cluster along z and add
  // their sums through distributed shared memory in split order (split_cluster_epilogue in
  // wgmma_ws_forward.cuh); partial is then null and no reduction pass runs. The plan's choice
  // (WgPlan::split_clusters).
  int split_cluster;
};

// Tile `id` of m_tiles x n_tiles in the plan's order (WgArgs::n_fast: N tiles fastest, else M).
__device__ __forceinline__ void tile_at(unsigned id, unsigned m_tiles, unsigned n_tiles,
                                        bool n_fast, int* mt, int* nt) {
  *mt = static_cast<int>(n_fast ? id / n_tiles : id % m_tiles);
  *nt = static_cast<int>(n_fast ? id % n_tiles : id / m_tiles);
}
// The (M tile, N tile) of this block of a tile-per-block grid (x: M tiles, y: N tiles): the launch
// order's index x + y * X as tile_at reads it, which in M-fastest order is (x, y) itself.
__device__ __forceinline__ void block_tile(const WgArgs& a, int* mt, int* nt) {
  if (!a.n_fast) {
    *mt = static_cast<int>(blockIdx.x), *nt = static_cast<int>(blockIdx.y);
    return;
  }
  tile_at(blockIdx.x + blockIdx.y * gridDim.x, gridDim.x, gridDim.y, true, mt, nt);
}

// The 128-byte swizzle in 16-byte units: chunk j of row i at j ^ (i % 8) (wgmma_ptx.cuh).
__device__ __forceinline__ int swizzle(int row, int chunk) {
  return row * kChunks + (chunk ^ (row & 7));
}

// The tile's fragments (acc, as below) written into shared memory at `smem` as pairs of O: the
// pair of row `row` (of the tile) at columns 8j + 2 quad + {0, 1} goes to byte at(row, j, quad).
// The epilogues' one layout of the fragments (store_staged's padded rows, store_bulk's boxes).
template <int BM, int BN, typename O, int kMI, typename At>
__device__ __forceinline__ void write_fragments(const float (&acc)[kMI][BN / 2], char* smem,
                                                int tid, At at) {
  const int group = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = group * (BM / 2) + mi * 64 + warp * 16 + lane / 4 + h * 8;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
        tc::store_pair(reinterpret_cast<O*>(smem + at(row, j, lane % 4)), acc[mi][4 * j + 2 * h],
                       acc[mi][4 * j + 2 * h + 1]);
    }
}

// The epilogue of the non-ragged kernel: the tile (acc, the m64nBN fragments: register 4j + 2h +
// {0, 1} of a thread holds row 16 warp + lane / 4 + 8h, columns 8j + 2 (lane % 4) + {0, 1} of its
// warpgroup's m64 block mi) is staged in shared memory as O (y's type, or fp32 for a split's
// partial sums), then stored in 16-byte chunks, a row's chunks by consecutive threads. Stored from
// the fragments directly, a warp's store wrote 8 rows x 16 bytes (half-sector pieces: the 1x1
// layers ran 1.3-1.6x slower). Rows padded by 16 bytes: a warp's pair writes spread over the banks.
// Needs k % (16 / sizeof(O)) == 0 (whole chunks) and the stages free (a barrier after the last
// wgmma).
// pixel(row): the output pixel of GEMM row `row` (a stride phase's rows land on y's stride grid).
// tid: the thread's index among the kThreads computing threads (both kernels' two consumer
// warpgroups); sync(): their barrier (all threads of the plain kernel, a named barrier of the
// consumers in the warp-specialised one).
template <int BM, int BN, typename O, int kMI, typename Pixel, typename Sync>
__device__ __forceinline__ void store_staged(O* out, const float (&acc)[kMI][BN / 2], uint4* smem,
                                             int m0, int n0, int m, int k, Pixel pixel, int tid,
                                             Sync sync) {
  constexpr int kPitch = BN * static_cast<int>(sizeof(O)) + 16;
  constexpr int kVecs = 16 / static_cast<int>(sizeof(O)), kRowChunks = BN / kVecs;
  char* stage = reinterpret_cast<char*>(smem);
  write_fragments<BM, BN, O>(acc, stage, tid, [](int row, int j, int quad) {
    return row * kPitch + (j * 8 + quad * 2) * static_cast<int>(sizeof(O));
  });
  sync();
#pragma unroll
  for (int i = tid; i < BM * kRowChunks; i += kThreads) {
    const int row = i / kRowChunks, col = n0 + (i % kRowChunks) * kVecs;
    if (m0 + row < m && col < k)
      *reinterpret_cast<uint4*>(out + pixel(m0 + row) * k + col) =
          *reinterpret_cast<const uint4*>(stage + row * kPitch + (i % kRowChunks) * 16);
  }
}

// Backward-data's filter tile read straight from the caller's KRSC filter (kFilterMn in the
// kernels): B is MN-major, kBK reduction rows (dy's channels k) of BN filter elements along dx's
// channels, stored as BN / 64 atoms of 64 channels (kMnAtomBytes each: kBK rows of 128 bytes,
// 16-byte chunk j of row i at j ^ (i % 8)), so the stage's B bytes are the K-major tile's; a k16
// step is 16 rows (2048 bytes) further, the atoms kMnAtomBytes apart (the descriptor's LBO).
constexpr int kMnAtomBytes = kBK * kRowBytes;
// The 16-byte unit of chunk j (along N) of reduction row i in such a tile.
__device__ __forceinline__ int swizzle_mn(int row, int chunk) {
  return (chunk / 8) * (kMnAtomBytes / 16) + row * 8 + ((chunk % 8) ^ (row & 7));
}

// One stage's multiply by a warpgroup, as one committed wgmma group: its kMI m64 blocks of rows at
// shared address sa times the BN filter rows at sb, four 32-byte k steps (k16, TF32 k8; 32 bytes
// apart in the swizzled rows; kFilterMn: B MN-major as above).
template <typename T, int BN, bool kFilterMn = false, int kMI>
__device__ __forceinline__ void multiply_stage(float (&acc)[kMI][BN / 2], std::uint32_t sa,
                                               std::uint32_t sb) {
  wg::fence_operands();
#pragma unroll
  for (int ks = 0; ks < kBK / 16; ++ks)
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
      const std::uint64_t da = wg::smem_desc(sa + mi * 64 * kRowBytes + ks * 32);
      if constexpr (kFilterMn)
        wg::mma<T, BN, false, true>(acc[mi], da, wg::smem_desc_mn(sb + ks * 2048, kMnAtomBytes), 1);
      else
        wg::mma<T, BN>(acc[mi], da, wg::smem_desc(sb + ks * 32), 1);
    }
  wg::commit();
}

// The output pixel of GEMM row `row`: the row itself, or (kPhased) its place on y's stride grid
// for the phase whose pixels are oh x ow at offset (qh, qw) (k3D: and its depth dp,
// tc::phase_pixel).
template <bool kPhased, bool k3D = false>
__device__ __forceinline__ std::int64_t out_pixel(const WgArgs& a, int row, int oh, int ow, int qh,
                                                  int qw, const tc::PhaseDepth& dp) {
  if constexpr (kPhased)
    return tc::phase_pixel<k3D>(a, row, oh, ow, qh, qw, dp);
  else
    return row;
}

}  // namespace convguard::gpu::wgf
