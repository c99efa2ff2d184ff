// gpu:wgmma_implicit_gemm's pixel-wide tiles (sm_90a): the forward GEMM with its operands' roles
// swapped, so that a tile's width along the output pixels is free. The other kernels put 128 or
// 256 pixels on the wgmma's M side (two warpgroups of m64 rows each) and the output channels on
// its N side; a layer's tile count then moves in steps of 128 pixels, and at batch 32 the layers
// of 6272 or 25088 pixels make 98 or 196 tiles of 128 x 128 on 132 SMs: 74% of the SMs busy, or a
// second wave half empty. Here the 128 output channels of a tile are the M side (two
// consumer warpgroups of 64 filter rows) and BP pixels the N side (m64nBPk16, BP any of 64, 96,
// 128, 192, 256), so the plan can pick the width that fills the SMs: 6272 pixels x 256 channels as
// 66 x 2 tiles of 96, 25088 x 128 as 131 of 192 (pixel_wide_for in wgmma_tiles.cuh). cuDNN 9.19
// runs such layers the same way on the H200 (Nsight Compute, docs/gpu/2026-11-28-pixel-wide:
// nvjet kernels of 128 x 96 and 128 x 192 tiles, 132 blocks).
// The stages are the bulk-copy kernel's (wgmma_ws_forward.cuh, kTma) with A and B exchanged: a
// tiled copy of 128 filter rows (A, K-major) and an im2col copy of BP pixels of one tap (B,
// K-major: each pixel's 64 channels one 128-byte swizzled row), one producer thread issuing both
// per stage, two consumer warpgroups multiplying. The accumulators come out transposed (rows are
// channels), so the epilogue writes them into shared memory as pixel rows and stores whole 16-byte
// chunks of a pixel's channels. Unsplit, one tile per block, 2D forward problems whose taps are
// whole stage rows (C % 64 == 0) and whose K is whole chunks (K % 8 == 0), and stride-1
// backward-data reading the caller's filter in place (kFilterMn: A as MN-major atoms, as the other
// kernels' B), 16-bit types only (WgPlan::pixel_wide_fits says where).
#pragma once

#include <cuda.h>  // CUtensorMap (a type only)

#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/solvers/stage_cursor.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/wgmma_forward_common.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"
#include "gpu/solvers/wgmma_ws_forward.cuh"

namespace convguard::gpu::wgf {

constexpr int kPwChannels = 128;  // a tile's output channels: two consumer warpgroups of m64
template <int BP>
constexpr int kPwStageBytes = (kPwChannels + BP) * kRowBytes;
// The epilogue's pixel rows of kPwChannels fp32 outputs, padded by 16 bytes (as store_staged's
// rows). fp32, not y's type: written as bf16 one element at a time, the conversions made ptxas
// serialise every wgmma of the kernel (warning C7514: it saw accumulators read inside the
// pipeline), as fp32 stores they do not.
constexpr int kPwPitch = kPwChannels * 4 + 16;
// As many stages as a block's 227 KiB hold beside the alignment slack and the barriers; the
// epilogue reuses them (every stage has been read by then).
template <int BP>
constexpr int kPwStages = (227 * 1024 - 1024 - 256) / kPwStageBytes<BP>;
template <int BP>
constexpr int kPwSmemBytes = kPwStages<BP>* kPwStageBytes<BP> + 1024 + 16 * kPwStages<BP>;

// The block's tile: channel tiles fastest over a 1D grid, so the blocks running at once share
// their pixels' rows (B, the larger operand) through L2.
struct PwTile {
  int n0, p0;  // first output channel, first output pixel
};
template <int BP>
__device__ __forceinline__ PwTile pw_tile(const WgArgs& a) {
  const int channel_tiles = (a.k + kPwChannels - 1) / kPwChannels;
  return {static_cast<int>(blockIdx.x % channel_tiles) * kPwChannels,
          static_cast<int>(blockIdx.x / channel_tiles) * BP};
}

// The producer (one thread): per stage, 128 filter rows from n0 at reduction column kk (map_w:
// filter_map, boxes of 128 rows) and BP pixels from p0 at tap (r, s), channels kk - tap * C
// (map_x: activation_map, boxes of BP pixels), both completing on the stage's full barrier.
template <int BP, bool kFilterMn>
__device__ __forceinline__ void produce_pixel_wide(const WgArgs& a, const CUtensorMap& map_w,
                                                   const CUtensorMap& map_x, PwTile t,
                                                   std::uint32_t base, std::uint32_t full,
                                                   std::uint32_t empty, int stages) {
  constexpr int kS = kPwStages<BP>;
  const int img = t.p0 / (a.ow * a.oh);
  const int h0 = (t.p0 / a.ow) % a.oh * a.sh - a.ph, w0 = t.p0 % a.ow * a.sw - a.pw;
  // The stage's reduction column kk: tap (r, s), channels from pos.c (wg::TapCursor: carries, no
  // divisions on the stage's path).
  wg::TapCursor pos(0, a.c, a.s);
  for (int kt = 0, kk = 0; kt < stages; ++kt, kk += kBK, pos.advance(kBK, a.c, a.s)) {
    const int st = kt % kS;
    if (kt >= kS) wg::mbar_wait(empty + 8 * st, ((kt / kS) & 1) ^ 1);
    const int r = pos.r, s = pos.s;
    const std::uint32_t A = base + st * kPwStageBytes<BP>, B = A + kPwChannels * kRowBytes;
    mbar_arrive_expect(full + 8 * st, kPwStageBytes<BP>);
    if constexpr (kFilterMn) {
      // Backward-data's A from the caller's KRSC filter (filter_map_mn): 64 dy channels of the
      // flipped tap, dx channels n0.. as two 64 x 64 MN-major atoms (swizzle_mn's layout), one for
      // each consumer warpgroup.
      const int col = a.phase[0].w_off - r * a.b_dr - s * a.b_ds + t.n0;
      tma_tile(A, map_w, col, pos.c, full + 8 * st);
      tma_tile(A + kMnAtomBytes, map_w, col + 64, pos.c, full + 8 * st);
    } else {
      tma_tile(A, map_w, kk, t.n0, full + 8 * st);
    }
    if (a.plain_x)
      tma_tile(B, map_x, kk, t.p0, full + 8 * st);
    else
      tma_im2col(B, map_x, pos.c, w0, h0, img, s * a.dw, r * a.dh, full + 8 * st);
  }
}

// The consumers: warpgroup `group` multiplies channels n0 + 64 group .. + 64 by the BP pixels of
// each stage, then both write the tile transposed into the stages (pixel rows of kPwPitch bytes)
// and store it converted, a 16-byte chunk a thread.
template <typename T, int BP, bool kFilterMn>
__device__ __forceinline__ void consume_pixel_wide(const WgArgs& a, PwTile t, uint4* smem,
                                                   std::uint32_t base, std::uint32_t full,
                                                   std::uint32_t empty, int stages) {
  constexpr int kS = kPwStages<BP>;
  const int tid = threadIdx.x - 128, group = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  float acc[1][BP / 2] = {};
  for (int kt = 0; kt < stages; ++kt) {
    const int st = kt % kS;
    wg::mbar_wait(full + 8 * st, (kt / kS) & 1);
    // The warpgroup's 64 filter rows, K-major, or (kFilterMn) its MN-major atom: the same bytes.
    const std::uint32_t sa = base + st * kPwStageBytes<BP> + group * kMnAtomBytes;
    const std::uint32_t sb = base + st * kPwStageBytes<BP> + kPwChannels * kRowBytes;
    wg::fence_operands();
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) {
      const std::uint64_t da =
          kFilterMn ? wg::smem_desc_mn(sa + ks * 2048, kMnAtomBytes) : wg::smem_desc(sa + ks * 32);
      wg::mma<T, BP, kFilterMn, false>(acc[0], da, wg::smem_desc(sb + ks * 32), 1);
    }
    wg::commit();
    wg::wait<1>();  // the previous stage's wgmma has read it: release it
    if (kt > 0 && lane == 0) wg::mbar_arrive(empty + 8 * ((kt - 1) % kS));
  }
  wg::wait<0>();
  // Every stage has landed and been read by both warpgroups once they pass this barrier.
  wg::named_barrier(1, 256);
  // Register 4j + 2h + e: channel 16 warp + lane / 4 + 8h of the warpgroup's 64, pixel 8j +
  // 2 (lane % 4) + e; a warp's 32 stores of one register fall in 32 banks (kPwPitch).
  float* stage = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int j = 0; j < BP / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int ch = group * 64 + warp * 16 + lane / 4 + 8 * h, px = 8 * j + 2 * (lane % 4) + e;
        stage[px * (kPwPitch / 4) + ch] = acc[0][4 * j + 2 * h + e];
      }
  wg::named_barrier(1, 256);
  // Eight channels of a pixel a thread: two fp32 vectors in, one 16-byte chunk of y out.
  constexpr int kRowChunks = kPwChannels / 8;
  T* y = static_cast<T*>(a.y);
#pragma unroll 4
  for (int i = tid; i < BP * kRowChunks; i += 256) {
    const int row = i / kRowChunks, chunk = i % kRowChunks, col = t.n0 + chunk * 8;
    if (t.p0 + row >= a.m || col >= a.k) continue;
    const float4* in = reinterpret_cast<const float4*>(stage + row * (kPwPitch / 4) + chunk * 8);
    const float4 lo = in[0], hi = in[1];
    alignas(16) T out[8];
    tc::store_pair(out, lo.x, lo.y);
    tc::store_pair(out + 2, lo.z, lo.w);
    tc::store_pair(out + 4, hi.x, hi.y);
    tc::store_pair(out + 6, hi.z, hi.w);
    *reinterpret_cast<uint4*>(y + static_cast<std::int64_t>(t.p0 + row) * a.k + col) =
        *reinterpret_cast<const uint4*>(out);
  }
}

// One tile a block (pw_tile), kWsThreads threads: the producer warpgroup (its thread 0 issues the
// copies), then the two consumer warpgroups. map_w: filter_map(a, kPwChannels), or (kFilterMn:
// stride-1 backward-data reading the caller's filter in place) filter_map_mn(a); map_x:
// activation_map(a, BP).
template <typename T, int BP, bool kFilterMn>
__global__ void __launch_bounds__(kWsThreads, 1)
    wgmma_forward_pixel_wide(const __grid_constant__ WgArgs a,
                             const __grid_constant__ CUtensorMap map_w,
                             const __grid_constant__ CUtensorMap map_x) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(sizeof(T) == 2, "16-bit types (a stage row is 64 channels)");
  constexpr int kS = kPwStages<BP>;
  static_assert(BP * kPwPitch <= kS * kPwStageBytes<BP>, "the epilogue's rows fit the stages");
  extern __shared__ uint4 smem_raw[];
  uint4* smem = smem_raw + ((1024 - (tc::smem_addr(smem_raw) & 1023)) & 1023) / 16;
  const std::uint32_t base = tc::smem_addr(smem);
  const std::uint32_t full = base + kS * kPwStageBytes<BP>, empty = full + 8 * kS;
  const PwTile t = pw_tile<BP>(a);
  const int stages = (a.kd + kBK - 1) / kBK;
  tma::init_stage_barriers(full, empty, kS);
  __syncthreads();
  if (threadIdx.x == 0)
    produce_pixel_wide<BP, kFilterMn>(a, map_w, map_x, t, base, full, empty, stages);
  else if (threadIdx.x >= 128)
    consume_pixel_wide<T, BP, kFilterMn>(a, t, smem, base, full, empty, stages);
#else
  (void)a;  // no sm_90a code in this pass: the host never launches it (check() declines)
  (void)map_w, (void)map_x;
#endif
}

}  // namespace convguard::gpu::wgf
