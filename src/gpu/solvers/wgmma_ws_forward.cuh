// gpu:wgmma_implicit_gemm's warp-specialised kernel (sm_90a): the same GEMM, tiles, swizzled
// stages and epilogue as the two-warpgroup kernel in wgmma_implicit_gemm.cu, but the loads are no
// longer the computing warps' work. There, each of the 8 computing warps formed the addresses of
// its share of every stage, issued its cp.async and then waited at a block barrier for all of
// them: the warps that feed the tensor cores also stalled on the loader's arithmetic and latency
// (the sibling backward-weights kernel measured 68% of cycles with no eligible warp). Here a third
// warpgroup (the producer) does all loads, each stage's copies completing on that stage's "full"
// mbarrier (cp.async.mbarrier.arrive.noinc: the arrival comes when the thread's copies land), and
// the two computing warpgroups (consumers) wait on it, multiply, and release the stage on its
// "empty" mbarrier once their wgmma has read it; nothing else synchronises the loop, so the
// producer runs up to kS stages ahead and one slow warp no longer holds the block back. The
// persistent variant walks several output tiles per block, so its producer loads the next tile
// while the consumers store the last one. With cp.async producers none of the variants beat the
// two-warpgroup kernel at its own tiles on ResNet-50 (docs/gpu/2026-11-25-wsfwd), so the plan
// takes them only in place of 256 x 128 tiles (ws_mode in wgmma_plan.cuh). The bulk-copy
// form (kTma) hands the loads to the TMA unit: one producer thread issues, per stage, an im2col
// copy of A (BM output pixels of one tap, the hardware walking the output grid and filling the
// padding with zeros) and a tiled copy of B, both completing on the stage's full barrier
// (backward-data's filter read in place: kFilterMn, B as MN-major atoms; forward 1x1 layers at
// stride 1 whose output grid is x's: a tiled copy of x's rows, WgArgs::plain_x); it beats the
// two-warpgroup kernel on most layers it fits (docs/gpu/2026-11-27-tma; tma_ws_for). Its
// persistent form also walks strided backward-data's stride phases (kPhased: every phase's tiles
// in one list, each phase's A through its own im2col map; WgPlan::phased_bulk_fits).
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: nothing of the driver is linked)

#include <cstdint>
#include <string>
#include <type_traits>

#include "gpu/check.hpp"
#include "gpu/solvers/stage_cursor.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tma.cuh"
#include "gpu/solvers/wgmma_forward_common.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu::wgf {

constexpr int kWsThreads = 3 * 128;  // producer warpgroup, then two consumer warpgroups
template <int BM, int BN, bool kPersistent>
constexpr int kWsBlocksPerSm = !kPersistent && BM + BN == 192 ? 2 : 1;
// The persistent variant stages its epilogue in a region of its own (the next tile's loads are
// already filling the stages), bf16/f16 rows padded by 16 bytes as store_staged's; store_bulk
// takes the region unpadded as BN / 64 boxes of BM x 128 bytes, at its start: 1024-byte aligned
// (the 128-byte swizzle's), since the stages before it are whole multiples of 1024 bytes.
template <int BM, int BN>
constexpr int kWsStagingBytes = BM*(BN * 2 + 16);
// Stages: the plain variant as the two-warpgroup kernel's; the persistent one what is left of a
// block's 227 KiB beside its staging region (128 x 128: 5, 128 x 64: 8).
template <int BM, int BN, bool kPersistent>
constexpr int kWsStages =
    kPersistent ? (227 * 1024 - 1024 - kWsStagingBytes<BM, BN> - 256) / kStageBytes<BM, BN>
                : kStages<BM, BN>;
// The stages, the persistent variant's staging region, then the full and empty mbarriers.
template <int BM, int BN, int S, bool kPersistent>
constexpr int kWsSmemBytes = kSmemBytes<BM, BN, S> + (kPersistent ? kWsStagingBytes<BM, BN> : 0) +
                             16 * S;

// The arrival on `bar` once every cp.async this thread issued before it has landed; noinc: the
// arrival counts against the count given at init (the producer's 128 threads).
__device__ __forceinline__ void cp_async_arrive(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// 16 bytes global -> shared at a shared-memory address; zero-filled when !valid.
__device__ __forceinline__ void cp_async16_at(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

// The pair of blocks of a cluster (kCluster): blocks 2i and 2i + 1 along M share the filter tile B;
// each loads half of its rows with one bulk tensor copy (TMA, 128-byte swizzle: the layout the
// consumers read) multicast into both blocks' stage, so B crosses from L2 once per pair.
using tma::mbar_arrive_expect;
using wg::cluster_rank;
using wg::cluster_sync;
// One arrival on the barrier at the same offset in the cluster's block `rank`. Release at the
// default (CTA) scope: what it hands over is a stage this block's wgmma has finished reading
// (wgmma.wait_group returned: the values are in registers), so no write of this block needs
// ordering for the other; a CTA-scope release orders nothing for the other block in the memory
// model, and nothing here relies on it (CUTLASS's cluster barrier arrives the same way). With
// .release.cluster the consumers stalled on a memory barrier per stage (Nsight Compute: "membar"
// the top stall reason, 3.4-3.8 cycles an instruction; docs/gpu/2026-11-27-tma/cluster).
__device__ __forceinline__ void mbar_arrive_cluster(std::uint32_t bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
// The box at (c0 elements along a filter row, c1 rows) of `map` into `dst` of both blocks of the
// cluster, completing on the barrier at `bar`'s offset in each.
__device__ __forceinline__ void tma_multicast(std::uint32_t dst, const CUtensorMap& map, int c0,
                                              int c1, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(c0), "r"(c1), "r"(bar),
      "h"(static_cast<unsigned short>(3))
      : "memory");
}

// kTma: both operands of a stage by bulk tensor copies issued by one producer thread, completing
// on the stage's full barrier (expect_tx). A: the im2col form of x's tensor map (activation_map;
// phased: the tile's phase's walk over dy, phase_maps):
// BM consecutive output pixels of one tap (r, s) (the offsets), 64 channels from c, each pixel's
// 128 bytes one swizzled row, pixels in padding or past the last image zero-filled; the copy
// walks the output grid (W, then H, then N) from the tile's first pixel (w, h, n: its window's
// corner); with a.plain_x, a tiled copy of BM rows of x read as [pixels][C] (tma_tile). B: BN
// filter rows of 64 elements at column kk (filter_map).
using tma::tma_im2col;
using tma::tma_tile;

// A tile's geometry: the problem's, or (kPhased) its stride phase's, as in the two-warpgroup
// kernel.
struct WsGeo {
  int oh, ow, taps_s, ph, pw, m_all, kd, wrow, w_off, qh, qw;
};
__device__ __forceinline__ WsGeo phase_geo(const WgArgs& a, int q) {
  WsGeo g{};
#pragma unroll
  for (int i = 0; i < tc::kMaxPhases; ++i)
    if (i == q) {
      const tc::Geo& p = a.phase[i];
      g = WsGeo{p.oh, p.ow, p.s, p.ph, p.pw, p.m, p.kd, p.wrow, p.w_off, p.qh, p.qw};
    }
  return g;
}
template <bool kPhased>
__device__ __forceinline__ WsGeo ws_geo(const WgArgs& a) {
  if constexpr (kPhased) return phase_geo(a, static_cast<int>(blockIdx.z));
  return WsGeo{a.oh, a.ow, a.s, a.ph, a.pw, a.m, a.kd, a.wrow, 0, 0, 0};
}

// Strided backward-data's persistent bulk-copy kernel walks the tiles of every stride phase in
// one list, phase by phase in the plan's order (the longest reductions first: WgPlan sorts
// a.phase), at most kTmaPhases phases (stride 2 x 2: each phase its own im2col map).
constexpr int kTmaPhases = 4;

// The output tiles a block computes and each one's geometry and reduction stages: its own
// (block_tile) with the block's, or (kPersistent) tiles blockIdx.x, + gridDim.x, ... of the grid
// in the plan's order (WgArgs::n_fast: N tiles fastest, else M), all of one geometry, or
// (kPersistent and kPhased) of the list of every phase's tiles, phase by phase (q: the tile's
// phase), M fastest, each with its phase's geometry and stages, dealt as a snake: round r of G
// tiles goes to blocks 0 .. G - 1 when r is even, G - 1 .. 0 when odd, so that with the longest
// tiles first the blocks that took the longest of one round take the shortest of the next (plain
// round robin left res5a_branch2b's backward-data, 52 tiles of 32 stages then 104 of 16 and 52 of
// 8, with 24 blocks of 48 stages where 32 would do). Dealt in contiguous shares of equal estimated
// cost (a tile's stages plus 2 for its epilogue), the tiles ran 1.2-1.4x slower on ResNet-50's
// stride-2 backward-data (docs/gpu/2026-11-29-session16/call2).
// The phased walk is two walks of that one list: the tiles of phases with taps (the loaders' and
// consumers'), and (`zeros`) the tiles of phases without taps, which come last in the plan's order
// and which the producer's idle warps store while the consumers multiply (store_zero_tiles): the
// snake's positions from the first zero tile on, so a block that took one more tile with taps in
// the last partial round starts on zeros a round later.
template <int BM, int BN, bool kPersistent, bool kPhased = false>
struct TileWalk {
  int t, count, n_tiles, q = 0, round = 0;
  WsGeo g;
  int tiles;
  int m0, n0;
  __device__ __forceinline__ TileWalk(const WgArgs& a, const WsGeo& geo, int stages,
                                      bool zeros = false)
      : g(geo), tiles(stages) {
    n_tiles = (a.k + BN - 1) / BN;
    t = kPersistent ? slot(0) : 0;
    count = 1;
    if constexpr (kPersistent && kPhased) {
      int all = 0, taps = 0;
#pragma unroll
      for (int i = 0; i < kTmaPhases; ++i)
        if (i < a.phases) {
          const int here = phase_tiles(a, i);
          all += here;
          if (a.phase[i].kd > 0) taps += here;
        }
      count = zeros ? all : taps;
      if (zeros) {
        round = taps / static_cast<int>(gridDim.x);
        t = slot(round);
        if (t < taps) t = slot(++round);
      }
    } else if constexpr (kPersistent) {
      count = (g.m_all + BM - 1) / BM * n_tiles;
    }
    if constexpr (!kPersistent) {
      int mt, nt;
      block_tile(a, &mt, &nt);
      m0 = mt * BM, n0 = nt * BN;
    } else if (more()) {
      locate(a);
    }
  }
  __device__ __forceinline__ bool more() const {
    return t < count;
  }
  __device__ __forceinline__ void next(const WgArgs& a) {
    t = kPersistent ? slot(++round) : t + 1;
    if constexpr (kPersistent)
      if (more()) locate(a);
  }

 private:
  // This block's tile of round r: blockIdx.x of it, or (kPhased: the snake) counted from the end
  // in odd rounds.
  __device__ __forceinline__ int slot(int r) const {
    const int blocks = static_cast<int>(gridDim.x), b = static_cast<int>(blockIdx.x);
    return r * blocks + (kPhased && r % 2 == 1 ? blocks - 1 - b : b);
  }
  __device__ __forceinline__ int phase_tiles(const WgArgs& a, int i) const {
    return (a.phase[i].m + BM - 1) / BM * n_tiles;
  }
  __device__ __forceinline__ void locate(const WgArgs& a) {
    int mt, nt;
    if constexpr (kPhased) {
      int local = t, found = 0;
      bool located = false;
#pragma unroll
      for (int i = 0; i < kTmaPhases; ++i) {
        const int here = i < a.phases ? phase_tiles(a, i) : 0;
        if (!located && local < here) found = i, located = true;
        if (!located) local -= here;
      }
      q = found;
      g = phase_geo(a, found);
      tiles = (g.kd + kBK - 1) / kBK;  // (16-bit stages of kBK elements: the kernel asserts it)
      tile_at(local, (g.m_all + BM - 1) / BM, n_tiles, false, &mt, &nt);
    } else {
      tile_at(t, (g.m_all + BM - 1) / BM, n_tiles, a.n_fast, &mt, &nt);
    }
    m0 = mt * BM, n0 = nt * BN;
  }
};

// A tile of zeros (a 2D stride phase no tap reaches), stored in 16-byte chunks straight from
// registers rather than through store_staged's two barriers and shared memory (res3a_branch1's
// backward-data, 1176 such tiles of 1568: 0.0474 -> 0.0455 ms on the H200,
// docs/gpu/2026-11-29-session16/call1, call3) by kBy threads (tid 0 .. kBy - 1), each at one
// chunk column of every kBy / (BN / 8)-th row. A row's dx pixel is found once by divisions
// (tc::phase_pixel's) and then stepped (tc::phase_pixel_at): with the divisions at every chunk, the
// 96 threads of store_zero_tiles took longer than the consumers' multiplies on res3a_branch1
// (docs/gpu/2026-11-29-session17). Needs k % (16 / sizeof(O)) == 0; touches no shared memory.
template <int BM, int BN, int kBy, typename O>
__device__ __forceinline__ void store_zeros(O* out, const WgArgs& a, const WsGeo& g, int m0, int n0,
                                            int tid) {
  constexpr int kVecs = 16 / static_cast<int>(sizeof(O)), kRowChunks = BN / kVecs;
  static_assert(kBy % kRowChunks == 0, "whole rows a pass");
  constexpr int kStep = kBy / kRowChunks;  // rows a pass
  const int col = n0 + (tid % kRowChunks) * kVecs;
  int row = m0 + tid / kRowChunks;
  if (col >= a.k || row >= g.m_all) return;
  // The row's pixel on the phase's oh x ow grid, kStep rows a step.
  wg::PixelCursor px(row, kStep, g.oh, g.ow);
  const int end = min(m0 + BM, g.m_all);
#pragma unroll 4
  for (; row < end; row += kStep, px.advance(g.oh, g.ow)) {
    const std::int64_t pixel = tc::phase_pixel_at(a, px.img, px.i, px.j, g.qh, g.qw);
    *reinterpret_cast<uint4*>(out + pixel * a.k + col) = make_uint4(0, 0, 0, 0);
  }
}

// The phased persistent walk's tiles of zeros (phases no tap reaches; TileWalk's `zeros`) are
// stored by the producer warpgroup's warps 1 to 3, idle otherwise (one thread of warp 0 issues the
// bulk copies), while the consumers multiply the tiles with taps: ResNet-50's stride-2 1x1
// layers' backward-data are three quarters such tiles, which the consumers stored between their
// own (docs/gpu/2026-11-29-session17).
constexpr int kZeroThreads = 96;
template <typename T, int BM, int BN>
__device__ __forceinline__ void store_zero_tiles(const WgArgs& a, int tid) {
  T* y = static_cast<T*>(a.y);
  for (TileWalk<BM, BN, true, true> tw(a, WsGeo{}, 0, true); tw.more(); tw.next(a)) {
    store_zeros<BM, BN, kZeroThreads>(y, a, tw.g, tw.m0, tw.n0, tid);
  }
}

// x's im2col maps for the bulk-copy loaders (kTma): the problem's in phase[0], or (persistent
// strided backward-data) each stride phase's walk over dy in phase[q] (a phase without taps: none);
// and y's tiled map for the persistent kernel's bulk stores (where WgArgs::bulk_store).
struct ActivationMaps {
  CUtensorMap phase[kTmaPhases];
  CUtensorMap y;
};

// The bulk-copy producer (kTma): one thread issues each stage's copies (tma_im2col, tma_tile); a
// stage is one tap's 128-byte row of channels (C a multiple of it); `it` as produce's below. In
// the phased persistent walk warps 1 to 3 store the tiles of zeros meanwhile (store_zero_tiles).
template <typename T, int BM, int BN, int kS, bool kPersistent, bool kPhased, bool kFilterMn>
__device__ __forceinline__ void produce_bulk(const WgArgs& a, const ActivationMaps& maps_a,
                                             const CUtensorMap& map_b, const WsGeo& geo,
                                             std::uint32_t base, std::uint32_t full,
                                             std::uint32_t empty, int kt0, int tiles) {
  if constexpr (kPersistent && kPhased)
    if (threadIdx.x >= 128 - kZeroThreads)
      return store_zero_tiles<T, BM, BN>(a, static_cast<int>(threadIdx.x) - (128 - kZeroThreads));
  if (threadIdx.x != 0) return;
  int it = 0;
  for (TileWalk<BM, BN, kPersistent, kPhased> tw(a, geo, tiles); tw.more(); tw.next(a)) {
    const WsGeo& g = tw.g;
    const int m0 = tw.m0, n0 = tw.n0;
    const int img = m0 / (g.ow * g.oh);
    const int h0 = (m0 / g.ow) % g.oh * a.sh - g.ph, w0 = m0 % g.ow * a.sw - g.pw;
    const CUtensorMap& map_a = maps_a.phase[kPhased ? tw.q : 0];
    // The flipped tap (0, 0) of the filter read in place: stride 1's, or the phase's sub-filter's.
    const int w_first = kPhased ? g.w_off : a.phase[0].w_off;
    // The stage's reduction column kk: tap (r, s), channels from pos.c (wg::TapCursor: carries,
    // no divisions on the stage's path).
    const int taps_s = max(g.taps_s, 1);
    int kk = kt0 * kBKOf<T>;
    wg::TapCursor pos(kk, a.c, taps_s);
    for (int kt = 0; kt < tw.tiles;
         ++kt, ++it, kk += kBKOf<T>, pos.advance(kBKOf<T>, a.c, taps_s)) {
      const int st = it % kS;
      if (it >= kS) wg::mbar_wait(empty + 8 * st, ((it / kS) & 1) ^ 1);
      const int r = pos.r, s = pos.s;
      const std::uint32_t A = base + st * kStageBytes<BM, BN>, B = A + BM * kRowBytes;
      mbar_arrive_expect(full + 8 * st, (BM + BN) * kRowBytes);
      if (a.plain_x)
        tma_tile(A, map_a, kk, m0, full + 8 * st);
      else
        tma_im2col(A, map_a, pos.c, w0, h0, img, s * a.dw, r * a.dh, full + 8 * st);
      if constexpr (kFilterMn) {
        // Backward-data's B from the caller's KRSC filter (filter_map_mn): 64 dy channels of the
        // flipped tap, whose dx channels n0.. are columns w_first - r * b_dr - s * b_ds + n0 of
        // the filter's rows; one 64 x 64 atom (swizzle_mn's layout) a copy.
        const int col = w_first - r * a.b_dr - s * a.b_ds + n0;
#pragma unroll
        for (int atom = 0; atom < BN / 64; ++atom)
          tma_tile(B + atom * kMnAtomBytes, map_b, col + 64 * atom, pos.c, full + 8 * st);
      } else {
        tma_tile(B, map_b, kk, n0, full + 8 * st);
      }
    }
  }
}

// The producer warpgroup: thread t loads chunk column t % 8 of rows t / 8 + 16 i of A and B of
// every stage; the reduction position (r, s, c) of its chunk advances by kBK per stage, without
// divisions. `it` counts the stages loaded over all the block's tiles (stage it % kS, pass it /
// kS).
template <typename T, int BM, int BN, int kS, bool kPersistent, bool kCluster>
__device__ __forceinline__ void produce(const WgArgs& a, const CUtensorMap& map_b, const WsGeo& g,
                                        std::uint32_t base, std::uint32_t full, std::uint32_t empty,
                                        int kt0, int tiles) {
  constexpr int kRowsA = BM / 16, kRowsB = BN / 16;  // rows per thread (16 per pass)
  const int tid = threadIdx.x, chunk = tid % kChunks, row0 = tid / kChunks;
  const T* x = static_cast<const T*>(a.x);
  const T* w = static_cast<const T*>(a.w) + g.w_off;
  const int s_div = g.taps_s > 0 ? g.taps_s : 1;
  int it = 0;
  for (TileWalk<BM, BN, kPersistent> tw(a, g, tiles); tw.more(); tw.next(a)) {
    const int m0 = tw.m0, n0 = tw.n0;
    // Per A row: its first input pixel (may lie in the padding) as an element offset, and ih/iw;
    // a row past the GEMM's M has its window moved out of the image (reads nothing).
    std::int64_t a_pix[kRowsA];
    int a_ih0[kRowsA], a_iw0[kRowsA];
#pragma unroll
    for (int i = 0; i < kRowsA; ++i) {
      const int m = m0 + row0 + 16 * i;
      const int mm = m < g.m_all ? m : 0;
      const int img = mm / (g.ow * g.oh);
      a_ih0[i] = m < g.m_all ? (mm / g.ow) % g.oh * a.sh - g.ph : -(1 << 28);
      a_iw0[i] = mm % g.ow * a.sw - g.pw;
      a_pix[i] = ((static_cast<std::int64_t>(img) * a.h + a_ih0[i]) * a.w_ + a_iw0[i]) * a.c;
    }
    const T* b_row = w + static_cast<std::int64_t>(n0 + row0) * g.wrow;
    const int b_rows_left = a.k - n0 - row0;  // rows i with 16 i < this are real channels
    int kk = kt0 * kBK + chunk * 8, c = kk % a.cp, s = (kk / a.cp) % s_div;
    int r = kk / (a.cp * s_div);
    for (int kt = 0; kt < tiles; ++kt, ++it) {
      const int st = it % kS;
      if (it >= kS) wg::mbar_wait(empty + 8 * st, ((it / kS) & 1) ^ 1);
      const std::uint32_t A = base + st * kStageBytes<BM, BN>, B = A + BM * kRowBytes;
      const bool in_k = kk < g.kd;
      const int ih_off = r * a.dh, iw_off = s * a.dw;
      const std::int64_t tap = (static_cast<std::int64_t>(ih_off) * a.w_ + iw_off) * a.c + c;
#pragma unroll
      for (int i = 0; i < kRowsA; ++i) {
        const int ih = a_ih0[i] + ih_off, iw = a_iw0[i] + iw_off;
        const bool v = in_k && ih >= 0 && ih < a.h && iw >= 0 && iw < a.w_;
        cp_async16_at(A + swizzle(row0 + 16 * i, chunk) * 16, v ? x + a_pix[i] + tap : x, v);
      }
      if constexpr (kCluster) {
        // B: this block's half of the rows for both blocks, then its own A as below.
        if (tid == 0) {
          const unsigned rank = cluster_rank();
          mbar_arrive_expect(full + 8 * st, BN * kRowBytes);
          tma_multicast(B + rank * (BN / 2) * kRowBytes, map_b, (kt0 + kt) * kBK,
                        n0 + static_cast<int>(rank) * (BN / 2), full + 8 * st);
        }
      }
#pragma unroll
      for (int i = 0; i < (kCluster ? 0 : kRowsB); ++i) {
        const bool v = in_k && 16 * i < b_rows_left;
        cp_async16_at(B + swizzle(row0 + 16 * i, chunk) * 16,
                      v ? b_row + static_cast<std::int64_t>(16 * i) * g.wrow + kk : w, v);
      }
      cp_async_arrive(full + 8 * st);
      kk += kBK;
      c += kBK;
      while (c >= a.cp) {
        c -= a.cp;
        if (++s == g.taps_s) s = 0, ++r;
      }
    }
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // none still landing when the block ends
}

// The persistent bulk-copy kernel's epilogue where y is a plain [m][k] matrix of whole 16-byte
// chunks a row (WgArgs::bulk_store): the consumers write the tile into the staging region as the
// tiled map's BN / 64 boxes of BM rows x 128 bytes (128-byte swizzle: chunk j of row i at
// j ^ (i % 8), which also spreads a warp's pair writes over the 32 banks), and one thread hands
// each box to a bulk tensor store, which clips rows past m and channels past k. The consumers go on
// to the next tile's multiplies while the stores drain; only the next epilogue waits, for them to
// have read the region. store_staged instead reads the region back and stores it 16 bytes a thread
// between two barriers, the tensor cores idle meanwhile: on short reductions (1x1 layers of 1 to 8
// stages) that read-back was a large part of a tile's time. tid, sync: as store_staged's.
template <int BM, int BN, typename T, int kMI, typename Sync>
__device__ __forceinline__ void store_bulk(const CUtensorMap& map, const float (&acc)[kMI][BN / 2],
                                           uint4* staging, int m0, int n0, int k, int tid,
                                           Sync sync) {
  static_assert(sizeof(T) == 2, "16-bit boxes of 64 channels");
  constexpr int kBoxBytes = BM * kRowBytes;
  if (tid == 0) tma::bulk_wait_read();  // the last tile's stores have read the region
  sync();
  write_fragments<BM, BN, T>(acc, reinterpret_cast<char*>(staging), tid,
                             [](int row, int j, int quad) {
                               return (j / 8) * kBoxBytes + swizzle(row, j % 8) * 16 + quad * 4;
                             });
  wg::fence_proxy_async();  // the generic writes, visible to the bulk copies' reads
  sync();
  if (tid == 0) {
    const std::uint32_t src = tc::smem_addr(staging);
#pragma unroll
    for (int b = 0; b < BN / 64; ++b)
      if (n0 + 64 * b < k) tma::tma_store_tile(map, src + b * kBoxBytes, n0 + 64 * b, m0);
    tma::bulk_commit();
  }
}

// The splits of a tile as one cluster along z (WgArgs::split_cluster): each block's consumers
// leave its fp32 sums in its own stages (free once both warpgroups' last wgmma has read them, the
// consumers' barrier before), rows of kSplitSumsLd floats; consumer thread `tid` holds rows
// group * BM / 2 + mi * 64 + warp * 16 + lane / 4 + 8 h, columns 8 j + 2 (lane % 4) + {0, 1}.
template <int BM, int BN>
constexpr int kSplitSumsLd = BN + 8;  // (8 floats of padding: a warp's float2 rows r, r + 1
                                      // land 8 banks apart, no two-way conflict)
template <int BM, int BN, int kS>
__device__ __forceinline__ void split_sums_to_stages(const float (&acc)[BM / 128][BN / 2],
                                                     float* sums, int tid) {
  static_assert(BM * kSplitSumsLd<BM, BN> * 4 <= kS * kStageBytes<BM, BN>, "sums in the stages");
  const int group = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
#pragma unroll
  for (int mi = 0; mi < BM / 128; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = group * (BM / 2) + mi * 64 + warp * 16 + lane / 4 + h * 8;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
        *reinterpret_cast<float2*>(sums + row * kSplitSumsLd<BM, BN> + j * 8 + (lane % 4) * 2) =
            make_float2(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
    }
}

// The consumer warpgroups: for each tile, wait for each stage, multiply (warpgroup `group` takes
// rows group * BM / 2 .. + BM / 2), release it once its wgmma has read it, then the epilogue
// (the persistent bulk-copy kernel's by bulk stores where a.bulk_store: store_bulk; else staged
// through `staging`, or pairs from the fragments when k % 8 != 0; a tile of the phased grid
// without taps, zeros from registers: store_zeros; the phased walk's are store_zero_tiles').
template <typename T, int BM, int BN, int kS, bool kSplit, bool kPhased, bool kPersistent,
          bool kCluster, bool kTma, bool kFilterMn>
__device__ __forceinline__ void consume(const WgArgs& a, const WsGeo& geo, uint4* staging,
                                        std::uint32_t base, std::uint32_t full, std::uint32_t empty,
                                        int tiles, const CUtensorMap& map_y) {
  constexpr int kMI = BM / 128;  // m64 blocks per consumer warpgroup
  // (store_bulk: persistent bulk copies over one plane, y's tiles whole 16-bit chunks)
  constexpr bool kBulkStore = kPersistent && kTma && !kPhased && !kSplit && sizeof(T) == 2;
  const int tid = threadIdx.x - 128, group = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  T* y = static_cast<T*>(a.y);
  const auto sync = [] { wg::named_barrier(1, 256); };
  // A stage is free once both blocks of a cluster have read it (B came into both from each).
  const auto release = [&](int stage) {
    wg::mbar_arrive(empty + 8 * stage);
    if constexpr (kCluster) mbar_arrive_cluster(empty + 8 * stage, cluster_rank() ^ 1);
  };
  int it = 0;
  for (TileWalk<BM, BN, kPersistent, kPhased> tw(a, geo, tiles); tw.more(); tw.next(a)) {
    const WsGeo& g = tw.g;
    const int m0 = tw.m0, n0 = tw.n0;
    const std::int64_t plane = static_cast<std::int64_t>(g.m_all) * a.k;
    auto pixel = [&](int row) { return out_pixel<kPhased>(a, row, g.oh, g.ow, g.qh, g.qw, {}); };
    float acc[kMI][BN / 2] = {};
    for (int kt = 0; kt < tw.tiles; ++kt, ++it) {
      const int st = it % kS;
      wg::mbar_wait(full + 8 * st, (it / kS) & 1);
      // The stage was written through the generic proxy (cp.async); the tensor cores read it
      // through the async proxy (as the bulk copies of kTma wrote it).
      if constexpr (!kTma) wg::fence_proxy_async();
      const std::uint32_t sa = base + st * kStageBytes<BM, BN> + group * (BM / 2) * kRowBytes;
      const std::uint32_t sb = base + st * kStageBytes<BM, BN> + BM * kRowBytes;
      multiply_stage<T, BN, kFilterMn>(acc, sa, sb);
      wg::wait<1>();  // the previous stage's wgmma has finished reading it: release it
      if (kt > 0 && lane == 0) release((it - 1) % kS);
    }
    wg::wait<0>();
    if (tw.tiles > 0 && lane == 0) release((it - 1) % kS);

    if constexpr (kBulkStore) {
      if (a.bulk_store) {
        store_bulk<BM, BN, T>(map_y, acc, staging, m0, n0, a.k, tid, sync);
        continue;
      }
    }
    if (a.k % kVecOf<T> == 0) {
      if constexpr (kPhased && !kSplit && !kPersistent) {
        // A tile of the grid's phase without taps: zeros, stored straight (store_zeros; the
        // persistent walk's tiles of zeros are store_zero_tiles', never the consumers').
        if (tw.tiles == 0) {
          store_zeros<BM, BN, kThreads>(y, a, g, m0, n0, tid);
          continue;
        }
      }
      // The plain variant stages in the stages: every copy has landed (each was waited for) and
      // both warpgroups' wgmma have read them (the barrier). The persistent one has a region of
      // its own, which the barrier hands over once the last tile's stores have read it.
      sync();
      if constexpr (kSplit) {
        if constexpr (kTma && !kPersistent && !kPhased) {
          if (a.split_cluster) {  // the sums to this block's stages (split_cluster_epilogue)
            split_sums_to_stages<BM, BN, kS>(acc, reinterpret_cast<float*>(staging), tid);
            continue;
          }
        }
        store_staged<BM, BN>(a.partial + blockIdx.z * plane, acc, staging, m0, n0, g.m_all, a.k,
                             pixel, tid, sync);
      } else
        store_staged<BM, BN>(y, acc, staging, m0, n0, g.m_all, a.k, pixel, tid, sync);
      continue;
    }
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + group * (BM / 2) + mi * 64 + warp * 16 + lane / 4 + h * 8;
        if (row >= g.m_all) continue;
        const std::int64_t off0 = pixel(row) * a.k;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = n0 + j * 8 + (lane % 4) * 2;
          if (col >= a.k) continue;
          tc::store_result(y, kSplit ? a.partial : nullptr, plane, off0 + col,
                           acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
        }
      }
  }
  // The bulk stores are done before the block ends (their source is this block's shared memory).
  if constexpr (kBulkStore)
    if (a.bulk_store && tid == 0) tma::bulk_wait();
}

// The splits' epilogue in a cluster (WgArgs::split_cluster), once the consumers have left each
// block's sums in its stages (split_sums_to_stages): every thread of the cluster's blocks (after
// the cluster's barrier: every block's sums are in place) adds, for its block's share of the
// tile's rows (rank r of n: rows BM r / n ..), the blocks' sums in rank order (= split order:
// blockIdx.z is the rank, and split z reads reduction tiles z * tiles_per_split ..) and stores y's
// elements, a quad of columns at a time (k % 8 == 0: a quad is whole or past K). No block leaves
// while another may still read its stages.
template <typename T, int BM, int BN>
__device__ __forceinline__ void split_cluster_epilogue(const WgArgs& a, const WsGeo& g,
                                                       const float* sums) {
  constexpr int kQuads = BN / 4;
  int mt, nt;
  block_tile(a, &mt, &nt);
  const int m0 = mt * BM, n0 = nt * BN;
  wg::cluster_sync();
  const unsigned n = wg::cluster_size(), rank = wg::cluster_rank();
  const int first = BM * static_cast<int>(rank) / static_cast<int>(n);
  const int last = BM * static_cast<int>(rank + 1) / static_cast<int>(n);
  T* y = static_cast<T*>(a.y);
  for (int i = threadIdx.x; i < (last - first) * kQuads; i += kWsThreads) {
    const int r = first + i / kQuads, col = i % kQuads * 4, row = m0 + r, cx = n0 + col;
    if (row >= g.m_all || cx >= a.k) continue;
    const std::uint32_t at = tc::smem_addr(sums + r * kSplitSumsLd<BM, BN> + col);
    float4 v = wg::load_cluster_f4(at, 0);
    for (unsigned q = 1; q < n; ++q) {
      const float4 u = wg::load_cluster_f4(at, q);
      v.x += u.x, v.y += u.y, v.z += u.z, v.w += u.w;
    }
    const std::int64_t off = out_pixel<false>(a, row, g.oh, g.ow, g.qh, g.qw, {}) * a.k + cx;
    tc::store_pair(y + off, v.x, v.y);
    tc::store_pair(y + off + 2, v.z, v.w);
  }
  wg::cluster_sync_relaxed();
}

// kPersistent: a grid of at most one block per SM walks all output tiles (TileWalk); unsplit
// problems only, unphased but for the bulk-copy form below. Else one tile per block, as the
// two-warpgroup kernel's grid.
// kCluster: launched in clusters of 2 along M (grid.x even; a block past M loads and multiplies
// zeros and stores nothing), B through map_b (tiled over the filter rows, box 64 x BN / 2, 128-byte
// swizzle); unphased, not persistent.
// kTma: A and B by bulk tensor copies (maps_a.phase[0]: activation_map, map_b: filter_map), one
// producer thread; 2D, taps of whole stage rows (C % 64, f32: % 32), not a cluster. kFilterMn
// (with kTma only): backward-data reading the caller's filter as an MN-major B (map_b:
// filter_map_mn), at stride 1, or (kPhased, kPersistent, 16-bit) strided: every stride phase's
// tiles in one persistent walk, phase q's A through maps_a.phase[q] (phase_maps). kTma and
// kPersistent, unphased, 16-bit: where a.bulk_store, the tiles stored through maps_a.y
// (store_bulk).
template <typename T, int BM, int BN, int kS, bool kSplit, bool kPhased, bool kPersistent,
          bool kCluster, bool kTma = false, bool kFilterMn = false>
__global__ void __launch_bounds__(kWsThreads, kWsBlocksPerSm<BM, BN, kPersistent>)
    wgmma_forward_ws(const __grid_constant__ WgArgs a,
                     const __grid_constant__ ActivationMaps maps_a,
                     const __grid_constant__ CUtensorMap map_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kPhasedBulk = kPhased && kPersistent && kTma;
  static_assert(!kPhasedBulk || (kFilterMn && sizeof(T) == 2),
                "phased bulk copies: 16-bit, in place");
  static_assert(!kPersistent || (!kSplit && (!kPhased || kPhasedBulk)),
                "persistent: one reduction, one plane but for the phased bulk copies");
  static_assert(!kCluster || (!kPersistent && !kPhased), "clusters: a tile per block, unphased");
  static_assert(!kTma || (!kCluster && (!kPhased || kPhasedBulk)),
                "bulk copies: no cluster, phased only persistent");
  static_assert(kTma || !kFilterMn, "the in-place filter: bulk copies only");
  extern __shared__ uint4 smem_raw[];
  uint4* smem = smem_raw + ((1024 - (tc::smem_addr(smem_raw) & 1023)) & 1023) / 16;
  const std::uint32_t base = tc::smem_addr(smem);
  constexpr int kStaging = kPersistent ? kWsStagingBytes<BM, BN> : 0;
  uint4* staging = smem + (kPersistent ? kS * kStageBytes<BM, BN> / 16 : 0);
  const std::uint32_t full = base + kS * kStageBytes<BM, BN> + kStaging, empty = full + 8 * kS;
  // The block's geometry (the phased persistent walk takes each tile's phase's instead).
  constexpr bool kBlockPhase = kPhased && !kPersistent;
  const WsGeo g = ws_geo<kBlockPhase>(a);
  if constexpr (kPhased && !kPersistent) {  // the whole block, past its phase's pixels
    int mt, nt;
    block_tile(a, &mt, &nt);
    if (mt * BM >= g.m_all) return;
  }
  const int kt0 = kPhased ? 0 : blockIdx.z * a.tiles_per_split;
  const int tiles = min((g.kd + kBKOf<T> - 1) / kBKOf<T> - kt0, a.tiles_per_split);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kS; ++s) {
      // full: the producer's 128 threads (+ the expect_tx arrival); empty: each consumer warp
      // (of both blocks of a cluster).
      wg::mbar_init(full + 8 * s, kTma ? 1 : kCluster ? 129 : 128);
      wg::mbar_init(empty + 8 * s, kCluster ? 16 : 8);
    }
    // The barriers are initialised before the bulk copies (the async proxy) and the other block's
    // copies and arrivals reach them.
    if constexpr (kTma || kCluster) tma::fence_mbarrier_init();
  }
  if constexpr (kCluster) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  if (threadIdx.x < 128)
    if constexpr (kTma)
      produce_bulk<T, BM, BN, kS, kPersistent, kPhased, kFilterMn>(a, maps_a, map_b, g, base, full,
                                                                   empty, kt0, tiles);
    else
      produce<T, BM, BN, kS, kPersistent, kCluster>(a, map_b, g, base, full, empty, kt0, tiles);
  else
    consume<T, BM, BN, kS, kSplit, kPhased, kPersistent, kCluster, kTma, kFilterMn>(
        a, g, staging, base, full, empty, tiles, maps_a.y);
  // No block leaves while the other may still arrive on its barriers.
  if constexpr (kCluster) cluster_sync();
  if constexpr (kSplit && kTma && !kPersistent && !kPhased) {
    if (a.split_cluster) {  // (no reduction pass follows)
      split_cluster_epilogue<T, BM, BN>(a, g, reinterpret_cast<const float*>(staging));
      return;
    }
  }
  // The splits' reduction pass, once the consumers have issued the tile's stores (not by the
  // producers, done before).
  if constexpr (kSplit)
    if (kCluster || threadIdx.x >= 128) wg::allow_dependents();
#else
  (void)a;  // no sm_90a code in this pass: the host never launches it (check() declines)
  (void)maps_a, (void)map_b;
#endif
}

// Host side of the cluster variant (wgmma_implicit_gemm.cu launches it).
// The tensor maps (tma.cuh), named for this solver's errors.
template <typename T>
inline Status tiled_map(const void* base, int cols, int rows, int box_rows, CUtensorMap* map) {
  return tma::tiled_map<T>(base, cols, rows, box_rows, map, "gpu:wgmma_implicit_gemm");
}

// The filter (forward: K-major rows of a.wrow elements, the reduction, a.k rows) for the cluster
// and bulk-copy loaders, boxes of `rows` rows.
template <typename T>
inline Status filter_map(const WgArgs& a, int rows, CUtensorMap* map) {
  return tiled_map<T>(a.w, a.wrow, a.k, rows, map);
}
// Backward-data's filter read in place (kFilterMn): the caller's KRSC filter as a.c (its K) rows
// of a.b_krow elements (R*S*C), boxes of 64 x 64: one MN-major atom. At stride 1 its start lies
// a.phase[0].w_off elements before a.w (the flipped tap (0, 0)); phased, a.w is its start.
template <typename T>
inline Status filter_map_mn(const WgArgs& a, CUtensorMap* map) {
  const int before = a.phases ? 0 : a.phase[0].w_off;
  return tiled_map<T>(static_cast<const T*>(a.w) - before, a.b_krow, a.c, kBK, map);
}

// x's walk as the im2col copies see it (tma::Walk): a 2D forward problem's, or a stride-1
// backward-data phase's (dy as x).
inline tma::Walk im2col_walk(const WgArgs& a) {
  return {a.m / (a.oh * a.ow), a.h, a.w_, a.c, a.oh, a.ow, a.ph, a.pw, a.sh, a.sw};
}

// x (NHWC, C a multiple of a stage row: 64 16-bit or 32 f32 elements) as an im2col tensor map for
// kTma: `pixels` output pixels x one 128-byte row of channels a copy (tma::im2col_map).
// a.plain_x: a tiled map of a.m rows of C channels instead, boxes of `pixels` rows.
template <typename T>
inline Status activation_map(const WgArgs& a, int pixels, CUtensorMap* map) {
  if (a.plain_x) return tiled_map<T>(a.x, a.c, a.m, pixels, map);
  return tma::im2col_map<T>(a.x, im2col_walk(a), pixels, map, "gpu:wgmma_implicit_gemm");
}

// A stride phase's walk over dy (strided backward-data): a stride-1 convolution of the phase's
// sub-filter, padded as the phase (negative: dy rows skipped), onto the phase's oh x ow pixels.
inline tma::Walk phase_walk(const WgArgs& a, const tc::Geo& g) {
  const int images = g.oh > 0 && g.ow > 0 ? g.m / (g.oh * g.ow) : 0;
  return {images, a.h, a.w_, a.c, g.oh, g.ow, g.ph, g.pw, 1, 1};
}
// Whether phase g has taps (else its pixels are zeros, and it has no map).
inline bool phase_has_taps(const tc::Geo& g) {
  return g.r > 0 && g.s > 0 && g.m > 0;
}
// The phased persistent kernel's im2col maps, one per phase with taps (kTmaPhases at most).
template <typename T>
inline Status phase_maps(const WgArgs& a, int pixels, ActivationMaps* maps) {
  if (a.phases > kTmaPhases)  // (WgPlan::phased_bulk_fits never plans it)
    return {StatusCode::internal_error, "gpu:wgmma_implicit_gemm: more stride phases than maps"};
  for (int q = 0; q < a.phases; ++q)
    if (phase_has_taps(a.phase[q]))
      if (auto st = tma::im2col_map<T>(a.x, phase_walk(a, a.phase[q]), pixels, &maps->phase[q],
                                       "gpu:wgmma_implicit_gemm");
          !st)
        return st;
  return Status::ok();
}

}  // namespace convguard::gpu::wgf
