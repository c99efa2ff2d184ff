// gpu:wgmma_bwd_weights' kernels (wgmma_bwd_weights.cu: the kernel whose threads load their
// stages by cp.async; wgmma_bwd_weights_tma.cuh: the warp-specialised one whose producer issues
// bulk tensor copies): the stage layout, the launch arguments and the epilogues they share. sm_90a
// code, included by wgmma_bwd_weights.cu alone.
#pragma once

#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu::wgbw {

// A stage holds BK pixels of both operands (64, or 32 with two blocks per SM). An operand's stage
// is a row of two 64-wide atoms (64 channels of dy, or 64 columns (r, s, c) of im2col(x)), each BK
// pixel rows of 128 bytes (kAtomBytes), 16-byte chunk j of pixel row i at j ^ (i % 8): 1024-byte
// swizzle atoms of 8 rows one after another, so the descriptor's SBO (between 8-pixel groups) is
// 1024 bytes and its LBO (between 64-wide atoms) kAtomBytes; a k16 step of the reduction is 2048
// bytes further. A block of the cp.async kernel computes a 128 x 128 tile of dw (kTile): BK 64
// with 7 stages of 32 KiB (one block per SM), BK 32 with 6 of 16 KiB (two blocks per SM); the
// bulk-copy kernel's tiles are 128 x BN, its B part of a stage BN / 64 atoms. A 64 x 256 tile for
// K <= 64
// was tried and measured slower on 19 of ResNet-50's 22 layers
// (docs/gpu/2026-11-25-wgmma-bwdw/run2/variants.txt): the kernel is bound by its loads and their
// instructions, not by the tensor cores, and the 128 x 128 tile's empty rows load nothing.
constexpr int kThreads = 256, kRowBytes = 128, kTile = 128;  // kThreads: the cp.async kernel's
template <int BK>
constexpr int kAtomBytes = BK* kRowBytes;
template <int BK>
constexpr int kStageBytes = 4 * kAtomBytes<BK>;  // A's two atoms, then B's
template <int BK>
constexpr int kStages = BK == 64 ? 7 : 6;
template <int BK>
constexpr int kSmemBytes = kStages<BK>* kStageBytes<BK> + 1024;  // + slack to align
// The cluster epilogue's fp32 tile in the (then idle) stages: 128 rows of kSumLd floats (BN: the
// tile's columns); the pad of 8 puts a warp's two-float stores of 8 rows x 4 lanes on distinct
// banks (two wavefronts).
template <int BN = kTile>
constexpr int kSumLd = BN + 8;
template <int BN = kTile>
constexpr int kSumBytes = kTile* kSumLd<BN> * 4;
static_assert(kSumBytes<> <= kStages<32> * kStageBytes<32>, "the sum tile fits the stages");

struct Args {
  const void* x;
  const void* dy;
  void* dw;
  int h, w_, c, k, s, sh, sw, ph, pw, dh, dw_;
  int oh, ow;                    // dy's pixel grid
  int step_n, step_oh, step_ow;  // BK pixels as (images, rows, columns): a row's next stage
  int pixels;                    // N*OH*OW: the reduction
  int cols;                      // R*S*C: dw's columns
  int tiles_per_split;           // stages of BK pixels each blockIdx.z reduces
  float* partial;                // splits' fp32 partial sums [split][k][cols]; null: dw directly
  // 3D (the k3D kernel; last, so the 2D kernels' offsets stay): the depth, and BK pixels' output
  // depths (step_n then counts images past the (od, oh, ow) carries).
  tc::Depth depth;
  int step_od;
};

// Byte offset of chunk j of pixel row `row` in atom `atom` of an operand's stage.
template <int BK>
__device__ __forceinline__ int chunk_at(int atom, int row, int j) {
  return atom * kAtomBytes<BK> + row * kRowBytes + ((j ^ (row & 7)) << 4);
}

// The splits of a tile, one cluster: each block puts its 128 x BN fp32 sums into its own shared
// memory; after a cluster barrier block `rank` of n adds rows rank * 128 / n .. of every block's
// tile, in rank order (a fixed order: the result does not depend on timing), and writes them to
// dw, or, when several clusters split the reduction, to the cluster's fp32 partial plane (z / n),
// which tc::launch_reduce_splits adds in plane order. A second barrier keeps every block's tile
// alive until the others have read it. Replaces the per-split partial planes in global memory
// (128 x 128 x 4 bytes a split, written and read back: most of the split's cost).
// Every thread of the block (kAll of them) calls it; `ctid` is the thread's index among the two
// warpgroups that hold the tile (acc), -1 for a thread that holds none (the bulk-copy kernel's
// producer warpgroup), which only helps with the adding.
template <typename T, int kAll = kThreads, int BN = kTile>
__device__ __forceinline__ void cluster_epilogue(const Args& a, const float* acc, char* smem,
                                                 int m0, int n0, int ctid) {
  constexpr int kLd = kSumLd<BN>, kQuads = BN / 4;  // a row's 4-column quads
  const int tid = threadIdx.x;
  float* sum = reinterpret_cast<float*>(smem);
  __syncthreads();  // every warpgroup's last wgmma has read its stages
  if (ctid >= 0) {
    const int group = ctid / 128, warp = (ctid % 128) / 32, lane = ctid % 32;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = group * 64 + warp * 16 + lane / 4 + h * 8;
#pragma unroll
      for (int f = 0; f < BN / 8; ++f)
        *reinterpret_cast<float2*>(sum + row * kLd + f * 8 + (lane % 4) * 2) =
            make_float2(acc[4 * f + 2 * h], acc[4 * f + 2 * h + 1]);
    }
  }
  wg::cluster_sync();
  const unsigned n = wg::cluster_size(), rank = wg::cluster_rank();
  const int first = kTile * static_cast<int>(rank) / static_cast<int>(n);
  const int last = kTile * static_cast<int>(rank + 1) / static_cast<int>(n);
  const std::int64_t plane = static_cast<std::int64_t>(a.k) * a.cols;
  for (int i = tid; i < (last - first) * kQuads; i += kAll) {  // a warp: consecutive quads
    const int r = first + i / kQuads, col = i % kQuads * 4, row = m0 + r, cx = n0 + col;
    if (row >= a.k || cx >= a.cols) continue;  // cols % 8 == 0: a quad is whole or out
    const std::uint32_t at = tc::smem_addr(sum + r * kLd + col);
    float4 v = wg::load_cluster_f4(at, 0);
    for (unsigned q = 1; q < n; ++q) {
      const float4 u = wg::load_cluster_f4(at, q);
      v.x += u.x, v.y += u.y, v.z += u.z, v.w += u.w;
    }
    const std::int64_t off = static_cast<std::int64_t>(row) * a.cols + cx;
    if (a.partial) {
      *reinterpret_cast<float4*>(a.partial + static_cast<std::int64_t>(blockIdx.z / n) * plane +
                                 off) = v;
    } else {
      T* dw = static_cast<T*>(a.dw);
      tc::store_pair(dw + off, v.x, v.y);
      tc::store_pair(dw + off + 2, v.z, v.w);
    }
  }
  wg::cluster_sync_relaxed();
}

// The unclustered epilogue: consumer thread `ctid` of the two warpgroups (warpgroup g holds rows
// 64 g.. of the tile) stores its fragment, register 4f + 2h + {0, 1} holding row 16 warp + lane / 4
// + 8h, columns 8f + 2 (lane % 4) + {0, 1}, as pairs to KRSC dw or (kSplit) this split's fp32
// partial plane. kRagged: R*S*C may be odd, so a pair may be unaligned or cut at the row's end.
template <typename T, bool kSplit, int BN = kTile, bool kRagged = false>
__device__ __forceinline__ void store_tile(const Args& a, const float* acc, int m0, int n0,
                                           int ctid) {
  const int group = ctid / 128, warp = (ctid % 128) / 32, lane = ctid % 32;
  T* dw = static_cast<T*>(a.dw);
  const std::int64_t plane = static_cast<std::int64_t>(a.k) * a.cols;
  const int out_row = m0 + group * 64 + warp * 16 + lane / 4, out_col = n0 + (lane % 4) * 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = out_row + h * 8;
    if (row >= a.k) continue;
#pragma unroll
    for (int f = 0; f < BN / 8; ++f) {
      const int cx = out_col + f * 8;
      if (cx >= a.cols) continue;
      const std::int64_t off = static_cast<std::int64_t>(row) * a.cols + cx;
      if constexpr (kRagged)
        tc::store_result_ragged(dw, kSplit ? a.partial : nullptr, plane, off, acc[4 * f + 2 * h],
                                acc[4 * f + 2 * h + 1], cx + 1 < a.cols, a.cols % 2 == 0);
      else
        tc::store_result(dw, kSplit ? a.partial : nullptr, plane, off, acc[4 * f + 2 * h],
                         acc[4 * f + 2 * h + 1]);
    }
  }
}

}  // namespace convguard::gpu::wgbw
