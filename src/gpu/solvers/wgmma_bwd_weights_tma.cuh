// gpu:wgmma_bwd_weights' warp-specialised kernel with bulk-copy loads (sm_90a): the same GEMM,
// 64-pixel swizzled stages, splits, clusters and epilogues as the cp.async kernel in
// wgmma_bwd_weights.cu, tiles of 128 rows (K) x BN columns (R*S*C; 128, 192 or 256), but the
// loads are no longer the computing warps' work. There, all 256 threads formed the addresses and
// validity tests of their chunks every stage and waited at a block barrier for everyone's
// cp.async (Nsight Compute: 65% of issue slots with no eligible warp,
// docs/gpu/2026-11-25-wgmma-bwdw/run4). Here one producer thread issues per stage up to 2 + BN /
// 64 bulk tensor copies (TMA), which write the very layout the consumers read (128-byte swizzle,
// pixel rows of 128 bytes):
//   A, dy's rows: a tiled copy of 64 pixels x 64 channels of dy read as a [pixels][K] matrix, per
//     64-channel half of the tile's rows (past K or the last pixel: zeros);
//   B, im2col(x)'s columns: an im2col copy of the same 64 output pixels of one tap (r, s), 64
//     channels, per 64 columns of the tile (C a multiple of 64: each is one tap's), the hardware
//     walking the output grid and filling the padding and the pixels past the last image with
//     zeros. (For 1x1 filters at stride 1 without padding, tiled copies of x's rows instead, as
//     gpu:wgmma_implicit_gemm's forward reads them, timed the same on ResNet-50 b32: 1.006x,
//     docs/gpu/2026-11-29-bwdw-tma; not kept.)
// A 64-wide part of the tile wholly past K or R*S*C is not loaded: a consumer warpgroup whose rows
// all lie past K does not multiply, and B parts past R*S*C leave whatever the stage held, which
// reaches only the columns past R*S*C (a column of the product reads only its own B column), and
// neither epilogue stores those. The copies complete on the stage's "full" mbarrier; the two
// consumer warpgroups wait on it, multiply (warpgroup g: rows 64 g.. of the tile, m64nBNk16, both
// operands MN-major) and release the stage on its "empty" mbarrier once their wgmma has read it.
// 2D only, 64-pixel stages (one block of 384 threads per SM); the plan chooses BN by its count of
// work (BwdwPlan::choose_columns in wgmma_bwd_weights.cu).
#pragma once

#include <cstdint>

#include "gpu/solvers/stage_cursor.cuh"
#include "gpu/solvers/tma.cuh"
#include "gpu/solvers/wgmma_bwd_weights_common.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu::wgbw {

constexpr int kTmaThreads = 3 * 128;  // the producer warpgroup, then two consumer warpgroups
constexpr int kTmaBK = 64;            // pixels a stage
// A stage: A's two 64-channel atoms of dy, then B's BN / 64 atoms of im2col(x).
template <int BN>
constexpr int kTmaStageBytes = (2 + BN / 64) * kAtomBytes<kTmaBK>;
// As many stages as fit beside the alignment slack and the 2 x 8 bytes of barriers each: 7 of 32
// KiB for BN 128 (as the cp.async kernel's), 5 for 192, 4 for 256.
template <int BN>
constexpr int kTmaStages = (227 * 1024 - 1024) / (kTmaStageBytes<BN> + 16);
template <int BN>
constexpr int kTmaSmemBytes = kTmaStages<BN>* kTmaStageBytes<BN> + 1024 + 16 * kTmaStages<BN>;
static_assert(kTmaStages<128> == 7 && kTmaStages<192> == 5 && kTmaStages<256> == 4);
static_assert(kSumBytes<256> <= kTmaStages<256> * kTmaStageBytes<256>, "the sum tile fits");
static_assert(kSumBytes<192> <= kTmaStages<192> * kTmaStageBytes<192>, "the sum tile fits");

// What a block loads: its tile's 64-wide parts that hold rows of dw (a_parts: 1 or 2) and
// columns (b_parts: 1 to BN / 64), and for each B part the tap and first channel its im2col copy
// reads.
template <int BN>
struct BlockLoads {
  int m0, n0, a_parts, b_parts;
  int c[BN / 64], off_w[BN / 64], off_h[BN / 64];
};
template <int BN>
__device__ __forceinline__ BlockLoads<BN> block_loads(const Args& a) {
  BlockLoads<BN> t{};
  t.m0 = static_cast<int>(blockIdx.x) * kTile, t.n0 = static_cast<int>(blockIdx.y) * BN;
  t.a_parts = a.k - t.m0 > 64 ? 2 : 1;
  t.b_parts = min(BN / 64, (a.cols - t.n0 + 63) / 64);
#pragma unroll
  for (int h = 0; h < BN / 64; ++h) {
    const int col = h < t.b_parts ? t.n0 + 64 * h : t.n0, tap = col / a.c, r = tap / a.s;
    t.c[h] = col - tap * a.c, t.off_h[h] = r * a.dh, t.off_w[h] = (tap - r * a.s) * a.dw_;
  }
  return t;
}

// The producer (one thread): stage it % kS of the split's stages kt0 + it, once the consumers
// have released what it held kS stages before.
template <int BN>
__device__ __forceinline__ void produce_bwdw(const Args& a, const CUtensorMap& map_dy,
                                             const CUtensorMap& map_x, const BlockLoads<BN>& t,
                                             std::uint32_t base, std::uint32_t full,
                                             std::uint32_t empty, int kt0, int tiles) {
  constexpr int kS = kTmaStages<BN>, kAtom = kAtomBytes<kTmaBK>;
  const int bytes = (t.a_parts + t.b_parts) * kAtom;
  // The stage's first output pixel p0 and its (image, oh, ow) (wg::PixelCursor: carries, no
  // divisions on the stage's path).
  int p0 = kt0 * kTmaBK;
  wg::PixelCursor px(p0, kTmaBK, a.oh, a.ow);
  for (int it = 0; it < tiles; ++it, p0 += kTmaBK, px.advance(a.oh, a.ow)) {
    const int st = it % kS;
    if (it >= kS) wg::mbar_wait(empty + 8 * st, ((it / kS) & 1) ^ 1);
    // The window corner of the stage's first output pixel.
    const int h0 = px.i * a.sh - a.ph, w0 = px.j * a.sw - a.pw, img = px.img;
    const std::uint32_t A = base + st * kTmaStageBytes<BN>, B = A + 2 * kAtom, bar = full + 8 * st;
    tma::mbar_arrive_expect(bar, bytes);
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (h < t.a_parts) tma::tma_tile(A + h * kAtom, map_dy, t.m0 + 64 * h, p0, bar);
#pragma unroll
    for (int h = 0; h < BN / 64; ++h)  // (unrolled: t's arrays stay in registers)
      if (h < t.b_parts)
        tma::tma_im2col(B + h * kAtom, map_x, t.c[h], w0, h0, img, t.off_w[h], t.off_h[h], bar);
  }
}

// A consumer warpgroup (ctid / 128: 0 or 1 of the two): its 64 rows of the tile over the split's
// stages; none when they lie past K (it still releases each stage).
template <typename T, int BN>
__device__ __forceinline__ void consume_bwdw(float* acc, const BlockLoads<BN>& t, int k,
                                             std::uint32_t base, std::uint32_t full,
                                             std::uint32_t empty, int tiles, int ctid) {
  constexpr int kS = kTmaStages<BN>, kAtom = kAtomBytes<kTmaBK>;
  const int group = ctid / 128, lane = ctid % 32;
  const bool rows = t.m0 + 64 * group < k;
  for (int it = 0; it < tiles; ++it) {
    const int st = it % kS;
    wg::mbar_wait(full + 8 * st, (it / kS) & 1);
    const std::uint32_t stage = base + st * kTmaStageBytes<BN>;
    if (rows) {
      wg::fence_operands();
#pragma unroll
      for (int ks = 0; ks < kTmaBK / 16; ++ks)
        wg::mma<T, BN, true>(acc, wg::smem_desc_mn(stage + group * kAtom + ks * 2048, kAtom),
                             wg::smem_desc_mn(stage + 2 * kAtom + ks * 2048, kAtom), 1);
      wg::commit();
    }
    wg::wait<1>();  // the previous stage's wgmma has read it: release it
    if (it > 0 && lane == 0) wg::mbar_arrive(empty + 8 * ((it - 1) % kS));
  }
  wg::wait<0>();
}

// kSplit: this split's fp32 partial plane (a.partial) instead of dw; kCluster: the splits of a
// tile run as one cluster along z and add their sums in shared memory (cluster_epilogue), as the
// cp.async kernel's. map_dy: tma::tiled_map over dy as [N*OH*OW][K], boxes of 64 x 64; map_x:
// tma::im2col_map over x, boxes of 64 pixels.
template <typename T, bool kSplit, bool kCluster, int BN>
__global__ void __launch_bounds__(kTmaThreads, 1)
    wgmma_bwd_weights_tma(const __grid_constant__ Args a,
                          const __grid_constant__ CUtensorMap map_dy,
                          const __grid_constant__ CUtensorMap map_x) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kS = kTmaStages<BN>;
  extern __shared__ uint4 smem_raw[];
  // Every atom must start 1024-byte aligned: the swizzle is computed from the address bits.
  char* smem =
      reinterpret_cast<char*>(smem_raw) + ((1024 - (tc::smem_addr(smem_raw) & 1023)) & 1023);
  const std::uint32_t base = tc::smem_addr(smem);
  const std::uint32_t full = base + kS * kTmaStageBytes<BN>, empty = full + 8 * kS;
  const BlockLoads<BN> t = block_loads<BN>(a);
  const int tiles_all = (a.pixels + kTmaBK - 1) / kTmaBK;
  const int kt0 = static_cast<int>(blockIdx.z) * a.tiles_per_split;
  const int tiles = max(0, min(tiles_all - kt0, a.tiles_per_split));  // this split's stages
  tma::init_stage_barriers(full, empty, kS);
  __syncthreads();
  float acc[BN / 2] = {};
  const int ctid = static_cast<int>(threadIdx.x) - 128;  // < 0: the producer warpgroup
  if (threadIdx.x == 0)
    produce_bwdw<BN>(a, map_dy, map_x, t, base, full, empty, kt0, tiles);
  else if (ctid >= 0)
    consume_bwdw<T, BN>(acc, t, a.k, base, full, empty, tiles, ctid);
  // Every copy issued has landed: the consumers waited for each stage. (Warp 0 reconverges
  // before the epilogue's aligned cluster barriers: only its lane 0 ran the producer loop.)
  __syncwarp();
  if constexpr (kCluster)
    cluster_epilogue<T, kTmaThreads, BN>(a, acc, smem, t.m0, t.n0, ctid);
  else if (ctid >= 0)
    store_tile<T, kSplit, BN>(a, acc, t.m0, t.n0, ctid);
  // The splits' reduction pass, if one follows, once the consumers have issued the tile's stores
  // (not by the producer's idle warps, which get here first).
  if (kCluster || ctid >= 0) wg::allow_dependents();
#else
  (void)a;  // no sm_90a code in this pass: the host never launches it (check() declines)
  (void)map_dy, (void)map_x;
#endif
}

}  // namespace convguard::gpu::wgbw
