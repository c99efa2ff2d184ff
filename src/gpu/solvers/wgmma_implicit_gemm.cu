// gpu:wgmma_implicit_gemm: the kernel and its planning, forward and backward-data
// (wgmma_implicit_gemm.hpp says what it computes). Built for sm_90a alone (CMakeLists.txt: its own
// object library), so the host code here also asks whether the kernel's image loads on the
// current device.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"
#include "gpu/solvers/tma.cuh"
#include "gpu/solvers/wgmma_forward_common.cuh"
#include "gpu/solvers/wgmma_implicit_gemm.hpp"
#include "gpu/solvers/wgmma_pixel_wide.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"
#include "gpu/solvers/wgmma_tiles.cuh"
#include "gpu/solvers/wgmma_ws_forward.cuh"

namespace convguard::gpu {
namespace {

using tc::cp_async16;
using tc::smem_addr;
using namespace wgf;

// kRagged: c not a multiple of 8 (WgPlan::ragged_loads); chunks are loaded element by element
// (tc::load_ragged, a channel run may start anywhere) and stored to shared memory directly, and
// outputs one by one. An odd k alone (dx's C = 3 of a first layer's backward-data, a forward to 3
// channels) keeps the cp.async loads and stores its outputs one by one (the epilogue asks at run
// time): conv1's backward-data at b32 had spent 1.28 ms in element-wise loads of 64-channel dy.
// kSplit: a.partial is set (split reduction); a template parameter, so the unsplit kernels carry
// no fp32 epilogue (with it selected at run time they ran 1-3% slower, v8/ against v7/).
// kPhased: strided backward-data, blockIdx.z is the stride phase (a.phase; never split).
// kFilterMn: backward-data with B read from the caller's KRSC filter (no flipped copy; WgPlan says
// when): a stage's B is kBK rows of dy channels k (all of one tap: K % 64 == 0) x BN of dx's
// channels c, each a run of C-contiguous filter elements, stored MN-major (swizzle_mn); not ragged.
// k3D: a 3D problem (a.depth): a row's image index counts (n, od), r the tap rows (t, r)
// (tc::Depth, tc::tap_source_3d); forward, or backward-data: at stride 1 the filter read in place
// steps back b_dr per tap row (the flip of (t, r) is the flip of tr); phased (strided), the depth's
// od, pd and taps_r are the phase's (a.phase_depth), its filter the flipped copy.
template <typename T, int BM, int BN, bool kRagged, int kS, bool kSplit, bool kPhased,
          bool kFilterMn, bool k3D = false>
__device__ __forceinline__ void forward_body(const WgArgs& a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(!(kRagged && kFilterMn), "the transposed filter tile takes whole chunks only");
  static_assert(!(k3D && kPhased && kFilterMn), "strided 3D backward-data reads a flipped copy");
  static_assert(sizeof(T) == 2 || (!kRagged && !kFilterMn), "TF32: aligned, flipped filter only");
  constexpr int kVec = kVecOf<T>, kBKe = kBKOf<T>;  // chunk and stage-row elements
  constexpr int kAhead = kS - 2, kLoadsB = BN * kChunks / kThreads;
  constexpr int kLoadsA = BM * kChunks / kThreads, kMI = BM / 128;  // m64 blocks per warpgroup
  extern __shared__ uint4 smem_raw[];
  // Each stage (A rows, then B rows) must start 1024-byte aligned: the swizzle is computed from
  // the address bits.
  uint4* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023) / 16;
  const std::uint32_t base = smem_addr(smem);
  constexpr int kStageVec = kStageBytes<BM, BN> / 16;
  const int tid = threadIdx.x, group = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  int mt, nt;
  block_tile(a, &mt, &nt);
  const int m0 = mt * BM, n0 = nt * BN;
  // The geometry: the problem's, or this block's stride phase's (field by field, as in
  // tc_implicit_gemm.cu).
  int oh = a.oh, ow = a.ow, taps_s = a.s, ph = a.ph, pw = a.pw, m_all = a.m, kd = a.kd;
  int wrow = a.wrow, w_off = 0, qh = 0, qw = 0;
  tc::PhaseDepth dp{};  // k3D: the depth's od, pd and taps_r (phased: the phase's) and qd
  if constexpr (k3D) dp = {a.depth.od, a.depth.pd, a.depth.taps_r, 0};
  if constexpr (kPhased) {
    if constexpr (k3D) tc::take_phase_depth(a, dp);
#pragma unroll
    for (int q = 0; q < tc::kMaxPhases; ++q)
      if (q == static_cast<int>(blockIdx.z)) {
        const tc::Geo& g = a.phase[q];
        oh = g.oh, ow = g.ow, taps_s = g.s, ph = g.ph, pw = g.pw, m_all = g.m, kd = g.kd;
        wrow = g.wrow, w_off = g.w_off, qh = g.qh, qw = g.qw;
      }
    if (m0 >= m_all) return;  // phases have fewer pixels than the grid's widest
  }
  const int kt0 = kPhased ? 0 : blockIdx.z * a.tiles_per_split;
  const T* x = static_cast<const T*>(a.x);
  const T* w = static_cast<const T*>(a.w) + w_off;

  // Loads: each thread fixed rows (tid / 8 + 32 i) and one chunk column; the reduction position
  // (r, s, c) of its chunk advances by kBK per stage loaded, so the loop has no divisions.
  const int chunk = tid % kChunks;
  int a_img[kLoadsA], a_id0[kLoadsA], a_ih0[kLoadsA], a_iw0[kLoadsA];
  bool a_ok[kLoadsA], b_ok[kLoadsB];
  // kFilterMn: this thread's B chunks are column b_col (8 dx channels) of reduction rows
  // b_row0 + kRowsPerPass i of each stage.
  constexpr int kRowChunksB = BN / 8, kRowsPerPass = kThreads / kRowChunksB;
  const int b_col = tid % kRowChunksB, b_row0 = tid / kRowChunksB;
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i)
    b_ok[i] = kFilterMn ? n0 + 8 * b_col < a.k : n0 + (tid + i * kThreads) / kChunks < a.k;
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    const int m = m0 + (tid + i * kThreads) / kChunks;
    a_ok[i] = m < m_all;
    const int mm = a_ok[i] ? m : 0;
    a_img[i] = mm / (ow * oh);
    if constexpr (k3D) tc::depth_of_row(a_img[i], dp.od, a.depth.sd, dp.pd, a_img[i], a_id0[i]);
    a_ih0[i] = (mm / ow) % oh * a.sh - ph;
    a_iw0[i] = mm % ow * a.sw - pw;
  }
  const int tiles_all = (kd + kBKe - 1) / kBKe;  // 0 for a phase no tap reaches: zeros written
  const int tiles = min(tiles_all - kt0, a.tiles_per_split);
  const int s_div = taps_s > 0 ? taps_s : 1;
  int kk = kt0 * kBKe + chunk * kVec, c = kk % a.cp, s = (kk / a.cp) % s_div,
      r = kk / (a.cp * s_div);
  const T* a_src[kLoadsA];
  bool a_val[kLoadsA];
  auto at_tap = [&] {  // A sources for tap (r, s): recomputed only when the tap changes
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      if constexpr (k3D) {
        a_src[i] =
            tc::tap_source_3d(x, a.depth.d, a.depth.dd, dp.taps_r, a.h, a.w_, a.c, a_img[i],
                              a_id0[i], a_ih0[i], a_iw0[i], r, s, a.dh, a.dw, c, a_ok[i], a_val[i]);
        continue;
      }
      const int ih = a_ih0[i] + r * a.dh, iw = a_iw0[i] + s * a.dw;
      a_val[i] = a_ok[i] && ih >= 0 && ih < a.h && iw >= 0 && iw < a.w_;
      a_src[i] = x + ((static_cast<std::int64_t>(a_img[i]) * a.h + ih) * a.w_ + iw) * a.c + c;
    }
  };
  at_tap();
  const T* b_src[kLoadsB];
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i)
    b_src[i] =
        kFilterMn
            ? w + static_cast<std::int64_t>(b_row0 + kRowsPerPass * i) * a.b_krow + n0 + 8 * b_col
            : w + static_cast<std::int64_t>(n0 + (tid + i * kThreads) / kChunks) * wrow;
  auto advance = [&] {
    kk += kBKe;
    c += kBKe;
    if (c < a.cp) {
#pragma unroll
      for (int i = 0; i < kLoadsA; ++i) a_src[i] += kBKe;
      return;
    }
    while (c >= a.cp) {
      c -= a.cp;
      if (++s == taps_s) s = 0, ++r;
    }
    at_tap();
  };
  auto load = [&](int stage) {
    uint4* A = smem + stage * kStageVec;
    uint4* B = A + BM * kChunks;
    const bool in_k = kk < kd;
    if constexpr (kRagged) {
      const int n = a.c - c;  // valid channels of this chunk (<= 0: all padding)
      const std::int64_t off = (static_cast<std::int64_t>(r) * taps_s + s) * a.c + c;
#pragma unroll
      for (int i = 0; i < kLoadsA; ++i)
        A[swizzle((tid + i * kThreads) / kChunks, chunk)] =
            tc::load_ragged(a_src[i], a_val[i] && in_k ? n : 0);
#pragma unroll
      for (int i = 0; i < kLoadsB; ++i)
        B[swizzle((tid + i * kThreads) / kChunks, chunk)] =
            tc::load_ragged(b_src[i] + off, b_ok[i] && in_k ? n : 0);
    } else {
#pragma unroll
      for (int i = 0; i < kLoadsA; ++i) {
        const bool v = a_val[i] && in_k;
        cp_async16(&A[swizzle((tid + i * kThreads) / kChunks, chunk)], v ? a_src[i] : x, v);
      }
      if constexpr (kFilterMn) {
        // The stage's dy channels start at c - 8 chunk (this thread's A chunk is in the same
        // tap); the tap (r, s) of the flipped filter is w's at w - r * b_dr - s * b_ds.
        const std::int64_t off =
            static_cast<std::int64_t>(c - chunk * 8) * a.b_krow - r * a.b_dr - s * a.b_ds;
#pragma unroll
        for (int i = 0; i < kLoadsB; ++i) {
          const bool v = b_ok[i] && in_k;
          cp_async16(&B[swizzle_mn(b_row0 + kRowsPerPass * i, b_col)], v ? b_src[i] + off : w, v);
        }
      } else {
#pragma unroll
        for (int i = 0; i < kLoadsB; ++i) {
          const bool v = b_ok[i] && in_k;
          cp_async16(&B[swizzle((tid + i * kThreads) / kChunks, chunk)], v ? b_src[i] + kk : w, v);
        }
      }
    }
    advance();
  };

  float acc[kMI][BN / 2] = {};
  // Tiles kt+1 .. kt+kAhead are loading while tile kt is multiplied. The stage loaded at step kt
  // last held tile kt-2, whose wgmma every warpgroup finished (wait<1> at the end of step kt-1)
  // before this step's barrier; wait<1> keeps one wgmma group in flight across the barrier.
#pragma unroll
  for (int st = 0; st < kAhead; ++st) {
    if (st < tiles) load(st);
    tc::cp_async_commit();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    tc::cp_async_wait<kAhead - 1>();  // this thread's chunks of tile kt have landed
    wg::fence_proxy_async();          // ... and are visible to the tensor cores
    __syncthreads();
    const std::uint32_t sa = base + (kt % kS) * kStageBytes<BM, BN> + group * (BM / 2) * kRowBytes;
    const std::uint32_t sb = base + (kt % kS) * kStageBytes<BM, BN> + BM * kRowBytes;
    multiply_stage<T, BN, kFilterMn>(acc, sa, sb);
    if (kt + kAhead < tiles) load((kt + kAhead) % kS);
    tc::cp_async_commit();
    wg::wait<1>();
  }
  wg::wait<0>();
  tc::cp_async_wait<0>();

  // Epilogue: staged (store_staged), or (ragged, odd k) pairs or elements from the fragments.
  T* y = static_cast<T*>(a.y);
  const std::int64_t plane = static_cast<std::int64_t>(m_all) * a.k;
  auto pixel = [&](int row) { return out_pixel<kPhased, k3D>(a, row, oh, ow, qh, qw, dp); };
  if (!kRagged && a.k % kVec == 0) {
    __syncthreads();  // every warpgroup's wgmma has finished reading the stages
    const auto sync = [] { __syncthreads(); };
    if constexpr (kSplit)
      store_staged<BM, BN>(a.partial + blockIdx.z * plane, acc, smem, m0, n0, m_all, a.k, pixel,
                           tid, sync);
    else
      store_staged<BM, BN>(y, acc, smem, m0, n0, m_all, a.k, pixel, tid, sync);
    return;
  }
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + group * (BM / 2) + mi * 64 + warp * 16 + lane / 4 + h * 8;
      if (row >= m_all) continue;
      const std::int64_t base = pixel(row) * a.k;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + j * 8 + (lane % 4) * 2;
        if (col >= a.k) continue;
        const std::int64_t off = base + col;
        const float v0 = acc[mi][4 * j + 2 * h], v1 = acc[mi][4 * j + 2 * h + 1];
        float* partial = kSplit ? a.partial : nullptr;
        if (kRagged || a.k % 2 != 0)
          tc::store_result_ragged(y, partial, plane, off, v0, v1, col + 1 < a.k, a.k % 2 == 0);
        else
          tc::store_result(y, partial, plane, off, v0, v1);
      }
    }
#else
  (void)a;  // no sm_90a code in this pass: the host never launches it (check() declines)
#endif
}

// The kernel: as many stages as one block's shared memory holds (kStages), or two blocks an SM
// (kStagesTwoPerSm; the plan's per_sm), whose launch bounds ask for two blocks so that ptxas keeps
// it within 128 registers. Separate entries: launch bounds naming a minimum of one block changed
// the register allocation of the others (conv1's ragged kernel ran 1.26x slower, call1/).
template <typename T, int BM, int BN, bool kRagged, int kS, bool kSplit, bool kPhased,
          bool kFilterMn, bool k3D = false>
__global__ void __launch_bounds__(kThreads) wgmma_forward(const __grid_constant__ WgArgs a) {
  forward_body<T, BM, BN, kRagged, kS, kSplit, kPhased, kFilterMn, k3D>(a);
}
template <typename T, int BM, int BN, bool kRagged, int kS, bool kSplit, bool kPhased,
          bool kFilterMn, bool k3D = false>
__global__ void __launch_bounds__(kThreads, 2) wgmma_forward_2sm(const __grid_constant__ WgArgs a) {
  forward_body<T, BM, BN, kRagged, kS, kSplit, kPhased, kFilterMn, k3D>(a);
}

// Which kernel the plan takes: 0 the two-warpgroup one, 1 the warp-specialised one, 2 its
// persistent variant, 3 its cluster variant, 4 and 5 the forms of 1 and 2 whose loads are bulk
// tensor copies (wgmma_ws_forward.cuh; launch_stages says for which tiles each exists). Measured
// on ResNet-50 b32 bf16 forward (docs/gpu/2026-11-25-wsfwd): the warp-specialised kernels with
// cp.async loaders tie with or lose to the two-warpgroup one on every layer at its own tile
// (128 x 64: 20-55% slower, one block per SM of 8 stages or two of 4; the cluster variant 1.5-2x
// slower, 0.75x after its per-stage cluster-scope fence went, docs/gpu/2026-11-27-tma/cluster),
// except that the persistent 128 x 128 kernel beats the 256 x 128 tiles tile_for picks for 1x1
// layers of K = 128 with many tiles (res3a_branch2a 0.0385 -> 0.0328 ms), so those take it (*tile
// becomes 128 x 128). The bulk-copy forms beat it on most forward layers they fit (WgPlan's
// tma_fits, tma_ws_for in wgmma_tiles.cuh). Non-ragged problems only (the ragged variant stores
// its element-wise loads itself). CONVGUARD_WGMMA_WS=0 to 5 forces a mode where it applies, for
// measuring (0: never the warp-specialised kernels; 4 and 5 fall back to 1 and 2 where the bulk
// copies do not fit, or to the two-warpgroup kernel for the in-place filter, TF32 and 3D; a
// bulk-copy plan has one block an SM, CONVGUARD_WGMMA_PER_SM aside).
bool tile_forced() {
  static const bool forced = std::getenv("CONVGUARD_WGMMA_TILE") != nullptr;
  return forced;
}
int ws_forced() {
  static const int forced = [] {
    const char* text = std::getenv("CONVGUARD_WGMMA_WS");
    if (!text) return -1;
    if (text[0] >= '0' && text[0] <= '5' && text[1] == 0) return text[0] - '0';
    std::fprintf(stderr, "convguard: CONVGUARD_WGMMA_WS='%s' ignored (0 to 5)\n", text);
    return -1;
  }();
  return forced;
}
int ws_mode(bool ragged, bool split_or_phased, Tile* tile) {
  const int forced = ws_forced();
  if (ragged) return 0;
  int mode = forced;
  if (forced < 0) {
    mode = 0;
    if (!split_or_phased && !tile_forced() && tile->bm == 256 && tile->bn == 128)
      *tile = Tile{128, 128}, mode = 2;
  }
  return mode == 2 && split_or_phased ? 1 : mode;  // (3 and phased: the launch takes 1)
}

// Whether backward-data reads the caller's filter as B (kFilterMn) rather than a flipped copy:
// where a stage's 64 reduction rows are dy channels of one tap (K % 64 == 0) and each row's dx
// channels are whole 16-byte chunks (C % 8 == 0); other shapes take the flip (tc's kernel writes
// w' into the workspace each run; ragged C and K load element-wise from it).
// CONVGUARD_WGMMA_BWD_FLIP=1 forces the flip everywhere, for measuring.
bool filter_mn_for(const Problem& p) {
  static const bool flip_forced = [] {
    const char* text = std::getenv("CONVGUARD_WGMMA_BWD_FLIP");
    return text && text[0] == '1' && text[1] == 0;
  }();
  // Strided 3D: a phase's tap row (t', r') steps back by two strides, not one (the flipped copy).
  const bool strided_3d = p.spatial_dims == 3 && p.stride[0] * p.stride[1] * p.stride[2] > 1;
  // TF32: wgmma takes 32-bit operands K-major only (no transpose-B).
  return p.direction == Direction::backward_data && p.k % 64 == 0 && p.c % 8 == 0 && !flip_forced &&
         !strided_3d && p.dtype != DType::f32;
}

// Everything a launch needs but the tensors. Backward-data is planned as its forward problem, as
// gpu:tc_implicit_gemm plans it (tc::stride_phases): x := dy (OH x OW, K channels), w := the
// flipped filter w'[c][r][s][k] = w[k][R-1-r][S-1-s][c], padding R-1-pad (negative: dy rows
// skipped), y := dx (H x W, C channels); with stride > 1, one such problem per stride phase
// (a.phase), each with its sub-filter, all in one launch. The flipped filter is either read in
// place (filter_mn: tap (r, s) of a phase's sub-filter is the caller's KRSC tap at w_off - r * b_dr
// - s * b_ds, its C channels contiguous, so the kernel loads B MN-major) or, for the other shapes,
// written into the workspace each run by tc::forward_operands as KRSC rows of r*s*K elements.
struct WgPlan : Plan {
  explicit WgPlan(const Problem& p)
      : Plan(p), backward(p.direction == Direction::backward_data), filter_mn(filter_mn_for(p)) {
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    const int vec = 16 / static_cast<int>(size_of(p.dtype));  // a chunk's elements
    if (backward) {
      filter_bytes = tc::plan_backward_data(p, i32((p.k + vec - 1) / vec * vec), a, &count);
      three_d = p.spatial_dims == 3;  // a.depth set, r = T * R (phased: each phase's)
      a.oh = a.phase[0].oh, a.ow = a.phase[0].ow, a.r = a.phase[0].r, a.s = a.phase[0].s;
      a.ph = a.phase[0].ph, a.pw = a.phase[0].pw;  // stride 1: the one phase
      if (filter_mn) plan_filter_in_place(p);
    } else {
      a.h = i32(p.input[1]), a.w_ = i32(p.input[2]), a.c = i32(p.c), a.k = i32(p.k);
      a.sh = i32(p.stride[1]), a.sw = i32(p.stride[2]);
      a.dh = i32(p.dilation[1]), a.dw = i32(p.dilation[2]);
      a.cp = i32((p.c + vec - 1) / vec * vec);
      a.oh = i32(p.output(1)), a.ow = i32(p.output(2));
      a.r = i32(p.filter[1]), a.s = i32(p.filter[2]);
      a.ph = i32(p.pad_begin[1]), a.pw = i32(p.pad_begin[2]);
      if (p.spatial_dims == 3) {  // the k3D kernel: rows over (n, od), tap rows over (t, r)
        three_d = true;
        a.depth = tc::depth_of(p);
        a.r *= i32(p.filter[0]);
      }
    }
    a.m = i32(p.n) * (three_d ? a.depth.od : 1) * a.oh * a.ow;
    static const bool im2col_forced = tc::env_int("CONVGUARD_WGMMA_IM2COL", 0, 1) == 1;
    // (no padding at either end: the output grid is x's own, oh == h and ow == w)
    a.plain_x = !im2col_forced && !backward && !three_d && a.r == 1 && a.s == 1 && a.sh == 1 &&
                a.sw == 1 && a.ph == 0 && a.pw == 0 && a.oh == a.h && a.ow == a.w_;
    a.kd = a.r * a.s * a.cp;
    a.wrow = a.r * a.s * a.c;
    ragged_loads = a.cp != a.c;
    ragged = ragged_loads || a.k % 2 != 0;
    // The tile rules count stages of kBK (64) elements; an f32 stage row holds 32 (kBKOf).
    const int kd_scale = kBK / (kRowBytes / static_cast<int>(size_of(p.dtype)));
    // 3D and TF32 have no cp.async warp-specialised form (its loaders are 2D and 16-bit only): the
    // two-warpgroup kernel with the 2D tile rules, or (TF32 2D forward) the bulk-copy loaders.
    const bool two_warpgroups_only = three_d || p.dtype == DType::f32;
    if (a.phases) {
      // All phases in one launch, unsplit (they fill the GPU as tc's do), 128-pixel tiles only.
      std::int64_t total = 0;
      int widest = 0, longest = 0;
      for (int q = 0; q < a.phases; ++q) {
        total += a.phase[q].m;
        widest = std::max(widest, a.phase[q].m),
        longest = std::max(longest, a.phase[q].kd * kd_scale);
      }
      tile = tile_for(total, a.k, longest, true, false);
      ws = filter_mn || two_warpgroups_only ? 0 : ws_mode(ragged, true, &tile);
      if (ws >= 4) ws = 1;  // bulk copies: unphased only
      a.tiles_per_split = 2147483647;
      grid = dim3(static_cast<unsigned>((widest + tile.bm - 1) / tile.bm),
                  static_cast<unsigned>((a.k + tile.bn - 1) / tile.bn),
                  static_cast<unsigned>(a.phases));
      per_sm = blocks_per_sm(std::int64_t{grid.x} * grid.y * grid.z, (longest + kBK - 1) / kBK,
                             tile, ragged, ws);
      return;
    }
    const std::int64_t kd = std::int64_t{a.kd} * kd_scale;  // in kBK-element stages' units
    tile =
        tile_for(a.m, a.k, kd, ragged, filter_mn, ws_forced() < 0 && tma_fits(p, Tile{128, 256}));
    // The bulk-copy loaders where they fit and pay (tma_ws_for sees tile_for's tiles, before
    // ws_mode turns 256 x 128 into the persistent cp.async kernel's 128 x 128); else the cp.async
    // warp-specialised kernels (ws_mode: they load B K-major only, 16-bit 2D), else the
    // two-warpgroup kernel. A forced mode of 4 or 5 holds for the in-place filter, TF32 and 3D too
    // (tma_fits below says whether it applies).
    ws = 0;
    if (ws_forced() < 0 && tma_fits(p, Tile{128, 128}))
      ws = tma_ws_for(a.m, a.k, (kd + kBK - 1) / kBK, p.dtype == DType::f32,
                      !filter_mn && !two_warpgroups_only, tile_forced(), &tile);
    if (ws == 0)
      ws = !filter_mn && !two_warpgroups_only ? ws_mode(ragged, false, &tile)
           : ws_forced() >= 4                 ? ws_forced()
                                              : 0;
    splits = split_count(a.m, a.k, kd, tile, filter_mn);
    if ((ws == 2 || ws == 5) && splits > 1) --ws;  // persistent: unsplit only
    if (ws == 5 && p.dtype == DType::f32) ws = 4;  // (forced) the persistent staging is 16-bit
    if (ws >= 4 && !tma_fits(p, tile)) ws = filter_mn || two_warpgroups_only ? 0 : ws - 3;
    const int tiles = static_cast<int>((kd + kBK - 1) / kBK);
    a.tiles_per_split = std::max(1, (tiles + splits - 1) / splits);
    used = std::max(1, (tiles + a.tiles_per_split - 1) / a.tiles_per_split);  // no empty split
    grid = dim3(static_cast<unsigned>((a.m + tile.bm - 1) / tile.bm),
                static_cast<unsigned>((a.k + tile.bn - 1) / tile.bn), static_cast<unsigned>(used));
    per_sm = blocks_per_sm(std::int64_t{grid.x} * grid.y * grid.z, std::int64_t{a.tiles_per_split},
                           tile, ragged, ws);
    a.n_fast = ws == 3 ? 0 : tile_order(grid.y);  // (clusters pair blocks along M)
    // Pixel-wide tiles in place of all that where they fit and leave the busiest SM less to do
    // (pixel_wide_for): unsplit, a tile per block, channel tiles fastest (pw_tile), one grid
    // dimension. A loader, tile or split forced for measuring keeps its plan, unless
    // CONVGUARD_WGMMA_PIXELS forces a width as well.
    const bool measuring = ws_forced() >= 0 || tile_forced() || split_forced() > 0;
    if (pixel_wide_fits(p) && (pixel_wide_forced() > 1 || !measuring)) {
      const std::int64_t blocks = std::int64_t{grid.x} * grid.y * grid.z;
      pixels = pixel_wide_for(a.m, a.k, tiles, plan_cost(blocks, tile, a.tiles_per_split));
      const std::int64_t pw_blocks = pixels ? ((a.k + kPwChannels - 1) / kPwChannels) *
                                                  ((std::int64_t{a.m} + pixels - 1) / pixels)
                                            : 0;
      if (pw_blocks > 2147483647) pixels = 0;
      if (pixels) {
        splits = used = per_sm = 1;
        ws = 0;
        a.tiles_per_split = tiles;
        a.n_fast = 0;
        grid = dim3(static_cast<unsigned>(pw_blocks));
      }
    }
    // CONVGUARD_WGMMA_PLAN=1: the plan on stderr, for measuring.
    static const bool say = tc::env_int("CONVGUARD_WGMMA_PLAN", 0, 1) == 1;
    if (say && pixels)
      std::fprintf(stderr,
                   "convguard: gpu:wgmma_implicit_gemm plan: 128 channels x %d pixels tiles "
                   "(pixel-wide), %u blocks, %d stages\n",
                   pixels, grid.x, a.tiles_per_split);
    else if (say)
      std::fprintf(stderr,
                   "convguard: gpu:wgmma_implicit_gemm plan: %d x %d tiles, %u x %u x %u blocks, "
                   "%d stages a split, loaders %d, %d a SM, %s fastest\n",
                   tile.bm, tile.bn, grid.x, grid.y, grid.z, a.tiles_per_split, ws, per_sm,
                   a.n_fast ? "N" : "M");
  }
  // Whether the pixel-wide kernel (wgmma_pixel_wide.cuh) takes the problem: 16-bit, what the
  // bulk-copy loaders take (tma_fits: 2D forward or stride-1 backward-data reading its filter in
  // place, whole stage rows of C, the im2col map's limits), K whole 16-byte chunks (its epilogue
  // stores them).
  bool pixel_wide_fits(const Problem& p) const {
    return p.dtype != DType::f32 && a.k % 8 == 0 && tma_fits(p, Tile{128, 128});
  }
  // Whether the bulk-copy (TMA) loaders (ws 4 and 5) take the plan at tile t: a 2D forward
  // problem (TF32 too), or stride-1 backward-data reading its filter in place, of taps of whole
  // stage rows (64 16-bit or 32 f32 channels: a stage is one tap's, the im2col copy's offsets are
  // the tap's), 128-pixel tiles (of 64, 128 or 256 channels), and strides, taps and corners the
  // im2col map can hold.
  bool tma_fits(const Problem& p, Tile t) const {
    const bool direction = p.direction == Direction::forward || (filter_mn && a.phases == 0);
    const int row = kRowBytes / static_cast<int>(size_of(p.dtype));  // a stage row's elements
    // The im2col map's strides, tap offsets and corners (tma::im2col_fits).
    const bool walk = tma::im2col_fits(im2col_walk(a), (a.r - 1) * a.dh, (a.s - 1) * a.dw);
    // (TF32 at 128 x 256 on these loaders compiles without spills but was never run: its plans
    // keep the two-warpgroup kernel, forced loaders too.)
    const bool width = t.bn <= 128 || p.dtype != DType::f32;
    return direction && p.spatial_dims <= 2 && !ragged && a.c % row == 0 && t.bm == 128 && width &&
           walk;
  }
  // Backward-data's flipped filter first (16-byte aligned for cp.async), then split-K's partials.
  std::size_t partial_bytes() const {
    return splits > 1 ? static_cast<std::size_t>(splits) * a.m * a.k * sizeof(float) : 0;
  }
  std::size_t workspace() const { return filter_bytes + partial_bytes(); }
  // filter_mn: no workspace for the filter; each phase's w_off becomes the element offset of its
  // sub-filter's tap (0, 0) in the caller's filter (first_tap for stride 1, whose kernel reads no
  // phase), and b_krow, b_dr, b_ds the steps around it (WgArgs).
  void plan_filter_in_place(const Problem& p) {
    filter_bytes = 0;
    const auto c = static_cast<int>(p.c), s_all = static_cast<int>(p.filter[2]);
    const auto sh = static_cast<int>(p.stride[1]), sw = static_cast<int>(p.stride[2]);
    a.b_krow = static_cast<int>(p.taps()) * c;
    a.b_dr = sh * s_all * c, a.b_ds = sw * c;
    for (int q = 0; q < count; ++q) {
      tc::Geo& g = a.phase[q];
      const int r0 = static_cast<int>((g.qh + p.pad_begin[1]) % sh);
      const int s0 = static_cast<int>((g.qw + p.pad_begin[2]) % sw);
      g.w_off = g.r > 0 && g.s > 0 ? ((r0 + (g.r - 1) * sh) * s_all + s0 + (g.s - 1) * sw) * c : 0;
    }
    first_tap = a.phase[0].w_off;
  }
  WgArgs a{};
  // ragged: the plan of the two-warpgroup kernel's 128-pixel tiles, its outputs stored one by one
  // (c not a multiple of 8, or k odd); ragged_loads: its loads element by element too (kRagged).
  bool backward, filter_mn, ragged = false, ragged_loads = false, three_d = false;
  int first_tap = 0;
  // 1, 2: the warp-specialised kernel, 2 persistent; 3 its cluster form; 4, 5: as 1, 2 with
  // bulk-copy loaders (wgmma_ws_forward.cuh; ws_mode, tma_ws_for)
  int ws = 0;
  Tile tile{128, 128};
  int splits = 1, used = 1;
  int per_sm = 1;  // 2: 128 x 128 tiles two blocks an SM (kStagesTwoPerSm; blocks_per_sm)
  int pixels = 0;  // pixel-wide tiles' width (wgmma_pixel_wide.cuh; pixel_wide_for), 0: not them
  std::size_t filter_bytes = 0;
  int count = 1;  // backward-data's stride phases (a.phase: their geometry)
  dim3 grid;
};

// Two blocks of 97 KiB fit an SM only where its carveout gives shared memory the most of the
// unified L1 (228 KiB); asked once per device (a hint: an error is not the launch's).
template <auto Kernel>
void prefer_shared() {
  static std::atomic<bool> done[tc::kCachedDevices] = {};
  const int dev = tc::current_device();
  if (dev >= 0 && dev < tc::kCachedDevices && done[dev].load(std::memory_order_acquire)) return;
  if (cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess)
    (void)cudaGetLastError();
  if (dev >= 0 && dev < tc::kCachedDevices) done[dev].store(true, std::memory_order_release);
}

template <auto Kernel, typename... Args>
Status launch_kernel(dim3 grid, int threads, int bytes, const Args&... args) {
  const Error opt_in = tc::allow_dynamic_shared_memory<Kernel>(bytes);
  if (opt_in != kSuccess) return check(opt_in, "gpu:wgmma_implicit_gemm shared memory opt-in");
  Kernel<<<grid, threads, bytes>>>(args...);
  return Status::ok();
}

// A persistent kernel's grid (ws 2 and 5): a block an SM, at most a block a tile.
inline dim3 persistent_grid(dim3 grid) {
  return dim3(std::min<unsigned>(grid.x * grid.y, static_cast<unsigned>(std::max(1, sms()))));
}

// ws (the plan's ws_mode): 0 the two-warpgroup kernel; 1 the warp-specialised one
// (wgmma_ws_forward.cuh), 2 its persistent variant (a block per SM at most), 3 its cluster variant
// (B multicast to pairs of blocks), where they exist: tiles whose consumers hold at most 64
// accumulators (ptxas allocates every warp within the entry cap of 168 registers, setmaxnreg or
// not: 128 x 256 and 256 x 128 spilled 344 and 1272 bytes), 128 pixels for 2 and 3.
// The bulk-copy loaders (ws 4, a tile per block; 5, persistent): x's im2col map and the filter's
// (K-major, or the caller's filter in place for backward-data), 128-pixel tiles of 64, 128 or 256
// channels: with one producer thread issuing the copies, the producer warpgroup holds so few
// registers that 128 x 256 fits the cap without spilling (ptxas: 154 registers, 164 persistent).
template <typename T, int BN, bool kSplit, bool kFilterMn>
Status launch_bulk_copies(const WgArgs& a, dim3 grid, int ws) {
  constexpr int BM = 128;
  CUtensorMap map_a, map_b;
  if (auto st = activation_map<T>(a, BM, &map_a); !st) return st;
  if (auto st = kFilterMn ? filter_map_mn<T>(a, &map_b) : filter_map<T>(a, BN, &map_b); !st)
    return st;
  if constexpr (!kSplit && sizeof(T) == 2) {  // (f32: tma_ws_for; the staging is 16-bit's)
    if (ws == 5) {
      constexpr int SP = kWsStages<BM, BN, true>;
      return launch_kernel<
          wgmma_forward_ws<T, BM, BN, SP, false, false, true, false, true, kFilterMn>>(
          persistent_grid(grid), kWsThreads, kWsSmemBytes<BM, BN, SP, true>, a, map_a, map_b);
    }
  }
  constexpr int SW = kWsStages<BM, BN, false>;
  return launch_kernel<
      wgmma_forward_ws<T, BM, BN, SW, kSplit, false, false, false, true, kFilterMn>>(
      grid, kWsThreads, kWsSmemBytes<BM, BN, SW, false>, a, map_a, map_b);
}

template <typename T, int BM, int BN, bool kRagged, int S, bool kSplit, bool kPhased,
          bool kFilterMn, bool k3D>
Status launch_stages(const WgArgs& a, dim3 grid, int ws) {
  if constexpr (!kRagged && !k3D && BM == 128 && !kPhased)
    if (ws == 4 || ws == 5) return launch_bulk_copies<T, BN, kSplit, kFilterMn>(a, grid, ws);
  if constexpr (!kRagged && !kFilterMn && !k3D && sizeof(T) == 2 && BM * BN <= 128 * 128) {
    const CUtensorMap none{};
    if constexpr (BM == 128 && !kPhased) {
      if (ws == 3) {
        constexpr int SW = kWsStages<BM, BN, false>, bytes = kWsSmemBytes<BM, BN, SW, false>;
        constexpr auto kernel = wgmma_forward_ws<T, BM, BN, SW, kSplit, false, false, true>;
        CUtensorMap map;
        if (auto st = filter_map<T>(a, BN / 2, &map); !st) return st;
        const Error opt_in = tc::allow_dynamic_shared_memory<kernel>(bytes);
        if (opt_in != kSuccess)
          return check(opt_in, "gpu:wgmma_implicit_gemm shared memory opt-in");
        wg::ClusterLaunch launch(dim3((grid.x + 1) / 2 * 2, grid.y, grid.z), kWsThreads, bytes,
                                 dim3(2, 1, 1));
        return check(cudaLaunchKernelEx(&launch.cfg, kernel, a, none, map),
                     "gpu:wgmma_implicit_gemm launch");
      }
    }
    if constexpr (BM == 128 && !kSplit && !kPhased) {
      if (ws == 2) {
        constexpr int SP = kWsStages<BM, BN, true>;
        return launch_kernel<wgmma_forward_ws<T, BM, BN, SP, false, false, true, false>>(
            persistent_grid(grid), kWsThreads, kWsSmemBytes<BM, BN, SP, true>, a, none, none);
      }
    }
    constexpr int SW = kWsStages<BM, BN, false>;
    if (ws != 0)
      return launch_kernel<wgmma_forward_ws<T, BM, BN, SW, kSplit, kPhased, false, false>>(
          grid, kWsThreads, kWsSmemBytes<BM, BN, SW, false>, a, none, none);
  }
  if constexpr (kMinBlocks<BM, BN, S> == 2) {
    constexpr auto kernel =
        wgmma_forward_2sm<T, BM, BN, kRagged, S, kSplit, kPhased, kFilterMn, k3D>;
    prefer_shared<kernel>();
    return launch_kernel<kernel>(grid, kThreads, kSmemBytes<BM, BN, S>, a);
  }
  return launch_kernel<wgmma_forward<T, BM, BN, kRagged, S, kSplit, kPhased, kFilterMn, k3D>>(
      grid, kThreads, kSmemBytes<BM, BN, S>, a);
}

template <typename T, int BM, int BN, bool kRagged, int S, bool kFilterMn, bool k3D>
Status launch_depth(const WgArgs& a, dim3 grid, int ws) {
  // The stride phases' tiles (WgPlan); strided 3D is never read in place.
  if constexpr (BM == 128 && BN <= 128 && !(k3D && kFilterMn))
    if (a.phases)
      return launch_stages<T, BM, BN, kRagged, S, false, true, kFilterMn, k3D>(a, grid, ws);
  return a.partial
             ? launch_stages<T, BM, BN, kRagged, S, true, false, kFilterMn, k3D>(a, grid, ws)
             : launch_stages<T, BM, BN, kRagged, S, false, false, kFilterMn, k3D>(a, grid, ws);
}

// per_sm (the plan's): 2 takes the 128 x 128 kernel of kStagesTwoPerSm stages (two blocks an SM;
// the two-warpgroup kernel only), else the kernel of kStages.
template <typename T, int BM, int BN, bool kRagged, bool kFilterMn = false, bool k3D = false>
Status launch_tiles(const WgArgs& a, dim3 grid, int ws, int per_sm = 1) {
  if constexpr (BM == 128 && BN == 128 && !kRagged)
    if (per_sm == 2 && ws == 0)
      return launch_depth<T, BM, BN, kRagged, kStagesTwoPerSm<BM, BN>, kFilterMn, k3D>(a, grid, 0);
  return launch_depth<T, BM, BN, kRagged, kStages<BM, BN>, kFilterMn, k3D>(a, grid, ws);
}

template <typename T, int BM, bool kFilterMn, bool k3D>
Status launch_width(const WgPlan& pl, const WgArgs& a) {
  if constexpr (BM == 128)
    if (pl.tile.bn == 256)
      return launch_tiles<T, BM, 256, false, kFilterMn, k3D>(a, pl.grid, pl.ws);
  return pl.tile.bn == 64
             ? launch_tiles<T, BM, 64, false, kFilterMn, k3D>(a, pl.grid, pl.ws)
             : launch_tiles<T, BM, 128, false, kFilterMn, k3D>(a, pl.grid, pl.ws, pl.per_sm);
}

template <typename T, bool kFilterMn, bool k3D>
Status launch_aligned(const WgPlan& pl, const WgArgs& a) {
  return pl.tile.bm == 256 ? launch_width<T, 256, kFilterMn, k3D>(pl, a)
                           : launch_width<T, 128, kFilterMn, k3D>(pl, a);
}

// A ragged plan: the two-warpgroup kernel on its 128-pixel tiles, loading element by element
// (kRaggedLoads) or by cp.async.
template <typename T, bool kRaggedLoads, bool k3D>
Status launch_ragged(const WgPlan& pl, const WgArgs& a) {
  return pl.tile.bn == 64 ? launch_tiles<T, 128, 64, kRaggedLoads, false, k3D>(a, pl.grid, 0)
                          : launch_tiles<T, 128, 128, kRaggedLoads, false, k3D>(a, pl.grid, 0);
}

// Every plan (k3D: a 3D one's, the same kernels' 3D forms): ragged ones on the two-warpgroup
// kernel's 128-pixel tiles (tile_for never picks 256 for them), backward-data's filter read in
// place or not, the others by the plan's tile, ws and per_sm. TF32 is never ragged or in place.
template <typename T, bool k3D>
Status launch_plan(const WgPlan& pl, const WgArgs& a) {
  if constexpr (sizeof(T) == 2) {
    if (pl.ragged)  // (k odd alone: the same kernel and tiles, its loads by cp.async)
      return pl.ragged_loads ? launch_ragged<T, true, k3D>(pl, a)
                             : launch_ragged<T, false, k3D>(pl, a);
    if (pl.filter_mn) return launch_aligned<T, true, k3D>(pl, a);
  }
  return launch_aligned<T, false, k3D>(pl, a);
}

// The pixel-wide kernel (16-bit only: WgPlan::pixel_wide_fits) of the plan's width.
template <typename T, int BP, bool kFilterMn>
Status launch_pixel_wide(const WgArgs& a, dim3 grid) {
  CUtensorMap map_w, map_x;
  if (auto st = kFilterMn ? filter_map_mn<T>(a, &map_w) : filter_map<T>(a, kPwChannels, &map_w);
      !st)
    return st;
  if (auto st = activation_map<T>(a, BP, &map_x); !st) return st;
  return launch_kernel<wgmma_forward_pixel_wide<T, BP, kFilterMn>>(
      grid, kWsThreads, kPwSmemBytes<BP>, a, map_w, map_x);
}
template <typename T, int BP>
Status launch_pixel_wide(const WgPlan& pl, const WgArgs& a) {
  return pl.filter_mn ? launch_pixel_wide<T, BP, true>(a, pl.grid)
                      : launch_pixel_wide<T, BP, false>(a, pl.grid);
}
template <typename T>
Status launch_pixel_wide(const WgPlan& pl, const WgArgs& a) {
  if constexpr (sizeof(T) == 2) {
    switch (pl.pixels) {
      case 64:
        return launch_pixel_wide<T, 64>(pl, a);
      case 96:
        return launch_pixel_wide<T, 96>(pl, a);
      case 128:
        return launch_pixel_wide<T, 128>(pl, a);
      case 192:
        return launch_pixel_wide<T, 192>(pl, a);
      case 256:
        return launch_pixel_wide<T, 256>(pl, a);
    }
  }
  return {StatusCode::internal_error, "gpu:wgmma_implicit_gemm: pixel-wide width"};
}

template <typename T>
Status launch(const WgPlan& pl, WgArgs a) {
  const Status st = pl.pixels    ? launch_pixel_wide<T>(pl, a)
                    : pl.three_d ? launch_plan<T, true>(pl, a)
                                 : launch_plan<T, false>(pl, a);
  if (!st) return st;
  if (a.partial)
    tc::launch_reduce_splits(a.partial, static_cast<T*>(a.y), static_cast<std::int64_t>(a.m) * a.k,
                             pl.used);
  return check_launch("gpu:wgmma_implicit_gemm launch");
}

}  // namespace

std::string_view WgmmaImplicitGemmSolver::id() const {
  return tf32_ ? "gpu:wgmma_implicit_gemm:tf32" : "gpu:wgmma_implicit_gemm";
}

Accuracy WgmmaImplicitGemmSolver::accuracy(const Problem& p) const {
  Accuracy a = GpuSolver::accuracy(p);
  if (tf32_) a.operand_roundoff = kTf32TruncatedRoundoff;
  return a;
}

Status WgmmaImplicitGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction == Direction::backward_weights)
    return not_applicable(
        "forward and backward-data only (backward-weights: gpu:wgmma_bwd_weights, "
        "gpu:tc_bwd_weights)");
  if (tf32_ && p.dtype != DType::f32)
    return not_applicable(
        "the TF32 variant is for f32 problems (f16/bf16: gpu:wgmma_implicit_gemm)");
  if (!tf32_ && p.dtype == DType::f32)
    return not_applicable("f16/bf16 only (f32 in TF32: gpu:wgmma_implicit_gemm:tf32)");
  if (tf32_ && (p.c % 4 != 0 || p.k % 4 != 0))
    return not_applicable(
        "C and K multiples of 4 only (whole 16-byte chunks; others: gpu:tc_implicit_gemm:tf32)");
  if (auto s = tc::dense_one_group(p); !s) return s;
  if (auto s = tc::backward_data_fits(p); !s) return s;
  if (auto s = tc::gemm_fits(p); !s) return s;
  return tf32_
             ? wg::hopper_here<
                   wgmma_forward<float, 128, 128, false, kStages<128, 128>, false, false, false>>()
             : wg::hopper_here<wgmma_forward<cg_bf16, 128, 128, false, kStages<128, 128>, false,
                                             false, false>>();
}

Result<std::size_t> WgmmaImplicitGemmSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return WgPlan(p).workspace();
}

Result<std::unique_ptr<Plan>> WgmmaImplicitGemmSolver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::unique_ptr<Plan>(new WgPlan(p));
}

Status WgmmaImplicitGemmSolver::run(const Plan& plan, const ConvTensors& t,
                                    std::span<std::byte> ws) const {
  const auto& pl = static_cast<const WgPlan&>(plan);
  if (ws.size() < pl.workspace())
    return {StatusCode::internal_error, "gpu:wgmma_implicit_gemm: workspace smaller than planned"};
  if (auto st = tc::require_aligned16(t, ws.data(), "gpu:wgmma_implicit_gemm"); !st) return st;
  WgArgs a = pl.a;
  // Backward-data: dx = forward(dy, flipped w), the caller's filter read in place (filter_mn; a
  // phased kernel adds its phase's w_off) or the flipped filter first in the workspace.
  tc::Operands o{};
  if (pl.filter_mn) {
    const std::size_t first = pl.count == 1 ? static_cast<std::size_t>(pl.first_tap) : 0;
    o = {t.y.data, static_cast<const std::byte*>(t.w.data) + first * size_of(plan.problem.dtype),
         t.x.data};
  } else if (auto st = tc::forward_operands(plan.problem, pl.a.phase, pl.a.phase_depth, pl.count, t,
                                            ws.data(), &o);
             !st) {
    return st;
  }
  a.x = o.x, a.w = o.w, a.y = o.y;
  a.partial = pl.splits > 1 ? reinterpret_cast<float*>(ws.data() + pl.filter_bytes) : nullptr;
  switch (plan.problem.dtype) {
    case DType::bf16:
      return launch<cg_bf16>(pl, a);
    case DType::f16:
      return launch<cg_half>(pl, a);
    case DType::f32:
      return launch<float>(pl, a);  // the TF32 variant (check)
  }
  return {StatusCode::internal_error, "gpu:wgmma_implicit_gemm: dtype"};
}

}  // namespace convguard::gpu
