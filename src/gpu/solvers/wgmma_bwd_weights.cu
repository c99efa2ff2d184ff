// gpu:wgmma_bwd_weights: the kernel and its planning (wgmma_bwd_weights.hpp says what it
// computes). Built for sm_90a alone (CMakeLists.txt: the object library of the wgmma solvers), so
// check() also asks whether the kernel's image loads on the current device.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"
#include "gpu/solvers/wgmma_bwd_weights.hpp"
#include "gpu/solvers/wgmma_bwd_weights_common.cuh"
#include "gpu/solvers/wgmma_bwd_weights_tma.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu {
namespace {

using namespace wgbw;
using tc::cp_async16;
using tc::smem_addr;

// 128 rows of dw (output channels) x 128 columns per block; warpgroup g computes rows 64 g.. of
// all 128 columns (m64n128k16). kCluster: the splits of a tile run as one cluster along z (launched
// with cluster dimensions (1, 1, n)) and add their sums in shared memory (cluster_epilogue). k3D: a
// 3D problem (a.depth): pixels over (n, od, oh, ow) with one more carry, columns over (t, r, s, c)
// with the tap row rs / S counting (t, r) as in the implicit GEMMs (tc::Depth); the 2D lines stay
// as they were.
// kRagged (2D, no clusters): C or K not a multiple of 8, so a 16-byte chunk of 8 channels or
// columns is not 16 aligned bytes of one pixel; each element is loaded alone (zero past the
// tensors, the padding and R*S*C) and the chunk stored to shared memory whole. C = 3 (a first
// layer) is the common case.
template <typename T, bool kSplit, int BK, bool k3D = false, bool kCluster = false,
          bool kRagged = false>
__global__ void __launch_bounds__(kThreads, BK == 64 ? 1 : 2)
    wgmma_bwd_weights(const __grid_constant__ Args a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kS = kStages<BK>, kAhead = kS - 2, kStage = kStageBytes<BK>;
  extern __shared__ uint4 smem_raw[];
  // Every atom must start 1024-byte aligned: the swizzle is computed from the address bits.
  char* smem = reinterpret_cast<char*>(smem_raw) + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const std::uint32_t base = smem_addr(smem);
  const int tid = threadIdx.x, group = tid / 128;
  const int m0 = blockIdx.x * kTile, n0 = blockIdx.y * kTile;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);

  // Each thread loads one pixel row of both operands per stage (row tid / kPerRow of the stage's
  // BK) and of it the 16-byte chunks j = tid % kPerRow + kPerRow q: dy's channels m0 + 8 j.. and
  // x's columns n0 + 8 j.. (r, s, c), whose offsets from the pixel and validity tests are computed
  // once; the pixel (image, oh, ow) advances BK pixels a stage by carries, with no divisions (the
  // loader's instructions bound the kernel: a division per row and stage cost 1.5x, ncu in
  // docs/gpu/2026-11-25-wgmma-bwdw/run3).
  constexpr int kPerRow = kThreads / BK, kPer = kTile / 8 / kPerRow;  // threads a row, chunks
  const int row = tid / kPerRow, j0 = tid % kPerRow;
  std::int64_t b_off[kPer];  // x offset of column q's chunk from the pixel's (ih0, iw0)
  int b_r[kPer], b_s[kPer], b_t[kPer], dst[kPer];  // b_t: 3D, the depth tap's offset
  int tap_r[kPer], tap_s[kPer], chan[kPer];        // kRagged: the chunk's first (r, s, c)
  bool a_ok[kPer], b_ok[kPer];
#pragma unroll
  for (int q = 0; q < kPer; ++q) {
    const int j = j0 + kPerRow * q, col = n0 + j * 8;
    a_ok[q] = m0 + j * 8 < a.k;
    b_ok[q] = col < a.cols;
    const int cc = b_ok[q] ? col : 0, rs = cc / a.c, c = cc - rs * a.c;
    const int r = rs / a.s, s = rs - r * a.s;
    tap_r[q] = r, tap_s[q] = s, chan[q] = c;
    b_r[q] = r * a.dh - a.ph, b_s[q] = s * a.dw_ - a.pw;
    b_off[q] = (static_cast<std::int64_t>(b_r[q]) * a.w_ + b_s[q]) * a.c + c;
    if constexpr (k3D) {  // r is the tap row (t, r)
      tc::split_tap_row(r, a.depth.taps_r, a.depth.dd, a.dh, b_t[q], b_r[q]);
      b_t[q] -= a.depth.pd, b_r[q] -= a.ph;
      b_off[q] = ((static_cast<std::int64_t>(b_t[q]) * a.h + b_r[q]) * a.w_ + b_s[q]) * a.c + c;
    }
    dst[q] = chunk_at<BK>(j / 8, row, j % 8);
  }
  const int tiles_all = (a.pixels + BK - 1) / BK;
  const int kt0 = blockIdx.z * a.tiles_per_split;
  const int tiles = min(tiles_all - kt0, a.tiles_per_split);  // this split's stages
  // This thread's pixel, next load (a cluster's trailing block, with no stages, starts at 0: its
  // pointers stay inside the tensors, though it loads nothing).
  int p = (tiles > 0 ? kt0 * BK : 0) + row;
  int ow = p % a.ow, t = p / a.ow, oh = t % a.oh, n = t / a.oh;
  int od = 0;
  if constexpr (k3D) tc::split_image(n, a.depth.od, n, od);
  const T* a_src = dy + static_cast<std::int64_t>(p) * a.k + m0 + j0 * 8;
  const std::int64_t a_step = static_cast<std::int64_t>(BK) * a.k;
  auto load = [&](int stage) {
    char* A = smem + stage * kStage;
    char* B = A + 2 * kAtomBytes<BK>;  // after A's two atoms
    const bool p_ok = p < a.pixels;
    const int ih0 = oh * a.sh, iw0 = ow * a.sw;
    const T* x_pix = x + ((static_cast<std::int64_t>(n) * a.h + ih0) * a.w_ + iw0) * a.c;
    int id0 = 0;
    if constexpr (k3D) {
      id0 = od * a.depth.sd;
      x_pix =
          x + (((static_cast<std::int64_t>(n) * a.depth.d + id0) * a.h + ih0) * a.w_ + iw0) * a.c;
    }
    if constexpr (kRagged) {
      const auto* dy_bits = reinterpret_cast<const std::uint16_t*>(a_src);
      const auto* x_bits = reinterpret_cast<const std::uint16_t*>(x);
      const std::int64_t image = static_cast<std::int64_t>(n) * a.h;
#pragma unroll
      for (int q = 0; q < kPer; ++q) {
        const int j = j0 + kPerRow * q, m = m0 + 8 * j, col = n0 + 8 * j;
        std::uint32_t wa[4] = {0, 0, 0, 0}, wb[4] = {0, 0, 0, 0};
        int r = tap_r[q], s = tap_s[q], c = chan[q];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int half = 16 * (e & 1);
          if (p_ok && m + e < a.k) wa[e / 2] |= std::uint32_t{dy_bits[8 * kPerRow * q + e]} << half;
          const int ih = ih0 + r * a.dh - a.ph, iw = iw0 + s * a.dw_ - a.pw;
          if (p_ok && col + e < a.cols && static_cast<unsigned>(ih) < static_cast<unsigned>(a.h) &&
              static_cast<unsigned>(iw) < static_cast<unsigned>(a.w_))
            wb[e / 2] |= std::uint32_t{x_bits[((image + ih) * a.w_ + iw) * a.c + c]} << half;
          if (++c == a.c) {  // the next column: (r, s, c) carried
            c = 0;
            if (++s == a.s) s = 0, ++r;
          }
        }
        *reinterpret_cast<uint4*>(A + dst[q]) = make_uint4(wa[0], wa[1], wa[2], wa[3]);
        *reinterpret_cast<uint4*>(B + dst[q]) = make_uint4(wb[0], wb[1], wb[2], wb[3]);
      }
    }
#pragma unroll
    for (int q = 0; q < kPer && !kRagged; ++q) {
      const bool va = p_ok && a_ok[q];
      cp_async16(A + dst[q], va ? a_src + 8 * kPerRow * q : dy, va);
      bool vb = p_ok && b_ok[q] &&
                static_cast<unsigned>(ih0 + b_r[q]) < static_cast<unsigned>(a.h) &&
                static_cast<unsigned>(iw0 + b_s[q]) < static_cast<unsigned>(a.w_);
      if constexpr (k3D)
        vb = vb && static_cast<unsigned>(id0 + b_t[q]) < static_cast<unsigned>(a.depth.d);
      cp_async16(B + dst[q], vb ? x_pix + b_off[q] : x, vb);
    }
    // The next stage's pixel: BK further, carried through ow < OW and oh < OH.
    p += BK;
    a_src += a_step;
    ow += a.step_ow;
    const int cw = ow >= a.ow;
    ow -= cw * a.ow;
    oh += a.step_oh + cw;
    const int ch = oh >= a.oh;
    oh -= ch * a.oh;
    if constexpr (k3D) {  // ... and od < OD
      od += a.step_od + ch;
      const int cd = od >= a.depth.od;
      od -= cd * a.depth.od;
      n += a.step_n + cd;
    } else {
      n += a.step_n + ch;
    }
  };

  float acc[kTile / 2] = {};
  // Stages kt+1 .. kt+kAhead are loading while stage kt is multiplied; the stage loaded at step kt
  // last held stage kt-2, whose wgmma both warpgroups finished (wait<1> at the end of step kt-1)
  // before this step's barrier, as in gpu:wgmma_implicit_gemm.
#pragma unroll
  for (int st = 0; st < kAhead; ++st) {
    if (st < tiles) load(st);
    tc::cp_async_commit();
  }
  const std::uint32_t a_atom = group * kAtomBytes<BK>, b_atoms = 2 * kAtomBytes<BK>;
  for (int kt = 0; kt < tiles; ++kt) {
    tc::cp_async_wait<kAhead - 1>();  // this thread's chunks of stage kt have landed
    wg::fence_proxy_async();          // ... and are visible to the tensor cores
    __syncthreads();
    const std::uint32_t stage = base + (kt % kS) * kStage;
    wg::fence_operands();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks)
      wg::mma<T, kTile, true>(acc, wg::smem_desc_mn(stage + a_atom + ks * 2048, kAtomBytes<BK>),
                              wg::smem_desc_mn(stage + b_atoms + ks * 2048, kAtomBytes<BK>), 1);
    wg::commit();
    if (kt + kAhead < tiles) load((kt + kAhead) % kS);
    tc::cp_async_commit();
    wg::wait<1>();
  }
  wg::wait<0>();
  tc::cp_async_wait<0>();
  if constexpr (kCluster)
    cluster_epilogue<T>(a, acc, smem, m0, n0, tid);
  else
    store_tile<T, kSplit, kTile, kRagged>(a, acc, m0, n0, tid);
  // The splits' reduction pass, if one follows (launch below; no barrier first: the block's first
  // thread here triggers it, which is safe, the pass waiting for the whole grid's writes).
  wg::allow_dependents();

#else
  (void)a;  // no sm_90a code in this pass: the host never launches it (check() declines)
#endif
}

// Cluster sizes the plan may choose: 2 and 3. Larger clusters were slower on ResNet-50 b32 (H100):
// limits of 4 and 8 lost 0.94x against the kernel without clusters, 2 won 1.11x, and 3 only where
// the rule gives 3 splits (res4's 3x3: 1.29x against 2's 0.99x; docs/gpu/2026-11-28-bwdw-cluster).
// CONVGUARD_WGMMA_BWDW_CLUSTER=N (1 to 8) allows N alone, for measuring; 1 is the kernel without
// clusters and its own split rule.
int forced_cluster_size() {
  static const int forced = tc::env_int("CONVGUARD_WGMMA_BWDW_CLUSTER", 1, 8);
  return forced;
}
bool cluster_size_allowed(int size) {
  const int forced = forced_cluster_size();
  return forced ? size == forced : size == 2 || size == 3;
}

// How many clusters of `size` blocks of the kernel with BK-pixel stages the current device runs
// at once (cudaOccupancyMaxActiveClusters), 0 when none or when the device cannot say. Cached per
// device, kernel and size, failures too, so that every plan of a problem (workspace_bytes' and
// plan's) comes out the same. A cluster's blocks run in one GPC at once, so fewer clusters may fit
// than SMs / size: on the H100 (132 SMs, one 64-pixel block each) 66 clusters of 2, 39 of 3.
// Kernel: one clustered kernel (the cp.async one of some BK, or the bulk-copy one of some BN), as
// launched with `threads` threads and `bytes` of shared memory.
template <auto kernel, int threads, int bytes>
int max_active_clusters(int size) {
  static std::atomic<int> cached[tc::kCachedDevices][9] = {};  // count + 1; 0: not read yet
  const int dev = tc::current_device();
  const bool cacheable = dev >= 0 && dev < tc::kCachedDevices && size >= 1 && size <= 8;
  if (cacheable)
    if (const int n = cached[dev][size].load(std::memory_order_relaxed)) return n - 1;
  int n = 0;
  if (tc::allow_dynamic_shared_memory<kernel>(bytes) == kSuccess) {
    const dim3 cluster(1, 1, static_cast<unsigned>(size));
    wg::ClusterLaunch launch(cluster, threads, bytes, cluster);
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &launch.cfg) != cudaSuccess) {
      (void)cudaGetLastError();  // not the next launch's error
      n = 0;
    }
  }
  n = std::max(n, 0);
  if (cacheable) cached[dev][size].store(n + 1, std::memory_order_relaxed);
  return n;
}

// Splits of the reduction. Without clusters: none when the tiles give at least a third of the
// SMs a block (a split's fp32 partials cost more than the idle SMs: ResNet-50's res5 layers, 64
// tiles, ran 5-8% faster unsplit than in 2, run2/variants.txt). With them (a split's sums cross
// shared memory, not global): whenever two splits still fit one wave. Either way as many as fill
// the SMs once (`per_sm` blocks each), each at least 8 stages, at most 256.
// CONVGUARD_WGMMA_BWDW_SPLIT=N (1 to 256) forces N, for measuring (in whole clusters where the
// plan takes clusters: rounded down, and no more than fit at once).
int split_count(std::int64_t out_tiles, std::int64_t stages, int per_sm, bool clusters) {
  static const int forced = tc::env_int("CONVGUARD_WGMMA_BWDW_SPLIT", 1, 256);
  if (forced) return static_cast<int>(std::min<std::int64_t>(forced, stages));
  const int sms = tc::sm_count() * per_sm;
  if (!clusters && 3 * out_tiles >= sms) return 1;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>({sms / out_tiles, stages / 8, 256})));
}

// The bulk-copy kernel (wgmma_bwd_weights_tma.cuh): 2D problems whose tile halves are one tap's
// channels (C a multiple of 64) and whose walk the im2col copies can take, with 64-pixel stages.
// CONVGUARD_WGMMA_BWDW_TMA=0 keeps the cp.async kernel everywhere, =1 takes the bulk-copy one
// wherever it fits, 32-pixel plans included (which it then runs at 64), for measuring.
int forced_tma() {
  static const int forced = [] {
    const char* text = std::getenv("CONVGUARD_WGMMA_BWDW_TMA");
    if (!text) return -1;
    if (std::string_view(text) == "0" || std::string_view(text) == "1") return std::atoi(text);
    std::fprintf(stderr, "convguard: CONVGUARD_WGMMA_BWDW_TMA='%s' ignored (0 or 1)\n", text);
    return -1;
  }();
  return forced;
}
// x's walk as the im2col copies see it (2D: the pixels are N images of OH x OW).
tma::Walk walk_of(const Args& a) {
  return {a.pixels / (a.oh * a.ow), a.h, a.w_, a.c, a.oh, a.ow, a.ph, a.pw, a.sh, a.sw};
}
bool tma_fits(const Problem& p, const Args& a) {
  const int r = static_cast<int>(p.filter[1]);
  return p.spatial_dims <= 2 && a.c % 64 == 0 &&
         tma::im2col_fits(walk_of(a), (r - 1) * a.dh, (a.s - 1) * a.dw_);
}

// The bulk-copy kernel's tile columns forced for measuring (CONVGUARD_WGMMA_BWDW_BN=128, 192 or
// 256), else 0: the plan's choice (BwdwPlan::choose_columns).
int forced_columns() {
  static const int forced = [] {
    const int v = tc::env_int("CONVGUARD_WGMMA_BWDW_BN", 128, 256);
    if (v == 0 || v == 128 || v == 192 || v == 256) return v;
    std::fprintf(stderr, "convguard: CONVGUARD_WGMMA_BWDW_BN=%d ignored (128, 192 or 256)\n", v);
    return 0;
  }();
  return forced;
}
template <int BN>
int bulk_clusters_of(int size) {
  return max_active_clusters<wgmma_bwd_weights_tma<cg_bf16, false, true, BN>, kTmaThreads,
                             kTmaSmemBytes<BN>>(size);
}
// How many clusters of `size` the kernel (bulk copies of `columns`, or cp.async stages of
// `pixels`) runs at once on the current device (max_active_clusters).
int clusters_fit(bool bulk_kernel, int columns, int pixels, int size) {
  if (bulk_kernel)
    return columns == 256   ? bulk_clusters_of<256>(size)
           : columns == 192 ? bulk_clusters_of<192>(size)
                            : bulk_clusters_of<128>(size);
  return pixels == 64 ? max_active_clusters<wgmma_bwd_weights<cg_bf16, false, 64, false, true>,
                                            kThreads, kSmemBytes<64>>(size)
                      : max_active_clusters<wgmma_bwd_weights<cg_bf16, false, 32, false, true>,
                                            kThreads, kSmemBytes<32>>(size);
}

// The cp.async kernel's pixels per stage: 64 (one block per SM), but 32 (two blocks per SM) when
// the tiles are more than one block per SM and at most two: ResNet-50's res5 3x3 layers (144
// tiles) ran 5% faster in one wave of two blocks per SM than in two waves; everywhere else 32 was
// 5-55% slower (run5/variants.txt). (The bulk-copy kernel, where it fits, takes those layers in
// one wave of 192-wide tiles instead.) CONVGUARD_WGMMA_BWDW_BK=32 or 64 forces it, for measuring.
int pixels_per_stage(std::int64_t out_tiles) {
  static const int forced = [] {
    const char* text = std::getenv("CONVGUARD_WGMMA_BWDW_BK");
    if (!text) return 0;
    if (std::string_view(text) == "32" || std::string_view(text) == "64") return std::atoi(text);
    std::fprintf(stderr, "convguard: CONVGUARD_WGMMA_BWDW_BK='%s' ignored (32 or 64)\n", text);
    return 0;
  }();
  if (forced) return forced;
  const int sms = tc::sm_count();
  return out_tiles > sms && out_tiles <= 2 * sms ? 32 : 64;
}

// C not a multiple of 8 with K one (2D/1D: a first layer's C = 3): run as the problem on x padded
// to C rounded up to 8 channels of zeros (pad_channels, into the workspace), whose chunks the
// 16-byte loads and the non-ragged kernels and plans take, into a dw of that many channels in the
// workspace, of which each tap's first C are then copied to the caller's dw (take_channels). The
// kRagged form's element-wise loads stay for K not a multiple of 8, and where
// CONVGUARD_WGMMA_BWDW_PAD=0 (for measuring).
bool pads_channels(const Problem& p) {
  const char* off = std::getenv("CONVGUARD_WGMMA_BWDW_PAD");  // read each time: tests set it
  return !(off && std::string_view(off) == "0") && p.c % 8 != 0 && p.k % 8 == 0 &&
         p.spatial_dims != 3;
}
Problem gemm_problem(const Problem& p) {
  Problem g = p;
  if (pads_channels(p)) g.c = (p.c + 7) / 8 * 8;
  return g;
}

constexpr std::size_t kWorkspaceAlign = 256;
std::size_t aligned(std::size_t bytes) {
  return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

struct BwdwPlan : Plan {
  explicit BwdwPlan(const Problem& user) : BwdwPlan(user, gemm_problem(user)) {}
  // p: the problem the kernels run (user's, or with its channels padded: pads_channels).
  BwdwPlan(const Problem& user, const Problem& p) : Plan(user) {
    pad_c = p.c != user.c;
    if (pad_c) {
      const std::int64_t elems = user.n * user.input[0] * user.input[1] * user.input[2];
      padded_x_bytes = static_cast<std::size_t>(elems * p.c) * 2;  // 16-bit types
      padded_dw_bytes =
          static_cast<std::size_t>(p.k * p.filter[0] * p.filter[1] * p.filter[2] * p.c) * 2;
      pixels_in = elems;
    }
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    a.h = i32(p.input[1]), a.w_ = i32(p.input[2]), a.c = i32(p.c), a.k = i32(p.k);
    a.s = i32(p.filter[2]);
    a.sh = i32(p.stride[1]), a.sw = i32(p.stride[2]);
    a.ph = i32(p.pad_begin[1]), a.pw = i32(p.pad_begin[2]);
    a.dh = i32(p.dilation[1]), a.dw_ = i32(p.dilation[2]);
    a.oh = i32(p.output(1)), a.ow = i32(p.output(2));
    three_d = p.spatial_dims == 3;
    if (three_d) a.depth = tc::depth_of(p);
    const int od = three_d ? a.depth.od : 1;
    a.pixels = i32(p.n * od * p.output(1) * p.output(2));
    a.cols = i32(p.filter[0] * p.filter[1] * p.filter[2] * p.c);
    gx = (a.k + kTile - 1) / kTile;
    ragged = p.c % 8 != 0 || p.k % 8 != 0;
    bk = ragged ? 64
                : pixels_per_stage(static_cast<std::int64_t>(gx) * ((a.cols + kTile - 1) / kTile));
    if (!ragged && forced_tma() != 0 && tma_fits(p, a)) {
      const int columns = forced_columns() ? forced_columns() : choose_columns();
      bulk = bk == kTmaBK || forced_tma() == 1 || columns != kTile;
      if (bulk) bk = kTmaBK, bn = columns;
    }
    a.step_ow = bk % a.ow, a.step_oh = bk / a.ow % a.oh, a.step_n = bk / a.ow / a.oh;
    if (three_d) a.step_od = bk / a.ow / a.oh % od, a.step_n = bk / a.ow / a.oh / od;
    const Splits sp = splits_for(bulk, bn, bk);
    a.tiles_per_split = sp.per_split;
    cluster = sp.cluster;
    planes = sp.z / sp.cluster;
    grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>((a.cols + bn - 1) / bn),
                static_cast<unsigned>(sp.z));
    // CONVGUARD_WGMMA_BWDW_PLAN=1: the plan on stderr, for measuring.
    static const bool say = tc::env_int("CONVGUARD_WGMMA_BWDW_PLAN", 0, 1) == 1;
    if (say)
      std::fprintf(stderr,
                   "convguard: gpu:wgmma_bwd_weights plan: %lld tiles x %u splits of %d stages "
                   "(%d pixels, %s, 128 x %d tiles), clusters of %d, %d fp32 planes (clusters "
                   "of 2 fit %d at once, of 3 %d)\n",
                   static_cast<long long>(grid.x) * grid.y, grid.z, a.tiles_per_split, bk,
                   bulk ? "bulk copies" : "cp.async", bn, cluster, planes,
                   clusters_fit(bulk, bn, bk, 2), clusters_fit(bulk, bn, bk, 3));
  }
  std::size_t partial_bytes() const {
    return planes > 1 ? static_cast<std::size_t>(planes) * a.k * a.cols * sizeof(float) : 0;
  }
  // The workspace: the splits' partial planes, then (pad_c) the padded x and dw, 256-aligned.
  std::size_t workspace_bytes() const {
    return pad_c ? aligned(partial_bytes()) + aligned(padded_x_bytes) + padded_dw_bytes
                 : partial_bytes();
  }
  // How the reduction is split for the kernel (bulk, bn, bk): z blocks a tile (splits, in
  // clusters of `cluster`), per_split stages each.
  struct Splits {
    int z, per_split, cluster;
    std::int64_t blocks;  // tiles x z
  };
  Splits splits_for(bool bulk_kernel, int columns, int pixels) const {
    const std::int64_t tiles = static_cast<std::int64_t>(gx) * ((a.cols + columns - 1) / columns);
    const int stages = (a.pixels + pixels - 1) / pixels;
    // Clusters where K and R*S*C are at least 128 (no tile of dw half empty): ResNet-50's res2
    // layers, whose K or R*S*C of 64 leaves half of every tile empty, ran 2-11% slower in
    // clusters than with a plane a split (12 to 61 stages a split;
    // docs/gpu/2026-11-28-bwdw-cluster).
    const int per_sm = pixels == 64 ? 1 : 2;
    const bool clusters =
        !ragged && (forced_cluster_size() > 1 ||
                    (forced_cluster_size() == 0 && a.k >= kTile && a.cols >= kTile));
    int splits = split_count(tiles, stages, per_sm, clusters);
    // The cluster size that keeps the most of those splits in whole clusters, no more clusters than
    // the device runs at once (the smaller size on a tie); none when no size fits, and then the
    // split rule without clusters.
    auto fit = [&](int size) { return clusters_fit(bulk_kernel, columns, pixels, size); };
    int size_taken = 1;
    if (clusters) {
      int kept = 0;
      for (int size = 2; size <= 8; ++size) {
        if (!cluster_size_allowed(size)) continue;
        const std::int64_t per_tile = std::min<std::int64_t>(splits / size, fit(size) / tiles);
        if (per_tile >= 1 && per_tile * size > kept)
          kept = static_cast<int>(per_tile * size), size_taken = size;
      }
      splits = size_taken > 1 ? kept : split_count(tiles, stages, per_sm, false);
    }
    const int per_split = (stages + splits - 1) / splits;
    // No split without stages, except the last cluster's tail, whose blocks add zeros.
    const int used = (stages + per_split - 1) / per_split;
    const int z = (used + size_taken - 1) / size_taken * size_taken;
    return {z, per_split, size_taken, tiles * z};
  }
  // The bulk-copy kernel's tile columns: the width of the least work on the busiest SM (waves of
  // blocks x stages a split x columns), 256-wide tiles counted at 0.95 of that and only where a
  // tile splits in at most 8; 128 on a tie. Fitted on ResNet-50 b32 on the H200, each width forced
  // on every layer (docs/gpu/2026-11-29-bwdw-tma): 192 where it cuts the columns' waste or the
  // waves (res2a_branch2b 1.22x, the res5 3x3 layers 1.5x: 96 tiles in one wave where 144 of 128
  // made two), 256 on the long tiles of res4 and res5 (1.02-1.16x); where 256-wide tiles split in
  // 16 to 32 (res3a_branch1, res4a_branch2a) they lost 4-10%, with the same count of work.
  int choose_columns() const {
    const std::int64_t sms = std::max(1, tc::sm_count());
    int best = kTile;
    double best_cost = 0;
    for (int columns : {kTile, 192, 256}) {
      const Splits sp = splits_for(true, columns, kTmaBK);
      if (columns == 256 && sp.z > 8) continue;
      const double cost = static_cast<double>((sp.blocks + sms - 1) / sms) * sp.per_split *
                          columns * (columns == 256 ? 0.95 : 1.0);
      if (columns == kTile || cost < best_cost) best = columns, best_cost = cost;
    }
    return best;
  }
  Args a{};
  int gx = 1;  // tiles along K
  bool three_d = false;
  bool bulk = false;    // the bulk-copy kernel (tma_fits), else the cp.async one
  bool ragged = false;  // C or K not a multiple of 8: the cp.async kernel's kRagged form
  bool pad_c = false;   // run on channels padded to 8 (pads_channels): a.c is the padded C
  std::size_t padded_x_bytes = 0, padded_dw_bytes = 0;
  std::int64_t pixels_in = 0;  // x's pixels (N H W), pad_c
  int bn = kTile;              // the bulk-copy kernel's tile columns (choose_columns)
  int bk = 64;
  int cluster = 1;  // blocks of a cluster along z (1: no cluster)
  int planes = 1;   // fp32 partial planes tc::launch_reduce_splits adds (1: none, dw directly)
  dim3 grid;
};

template <typename T, bool kSplit, int BK, bool k3D, bool kCluster, bool kRagged = false>
Status launch_tile(const Args& a, const BwdwPlan& pl) {
  constexpr int bytes = kSmemBytes<BK>;
  constexpr auto kernel = wgmma_bwd_weights<T, kSplit, BK, k3D, kCluster, kRagged>;
  const Error opt_in = tc::allow_dynamic_shared_memory<kernel>(bytes);
  if (opt_in != kSuccess) return check(opt_in, "gpu:wgmma_bwd_weights shared memory opt-in");
  if constexpr (!kCluster) {
    kernel<<<pl.grid, kThreads, bytes>>>(a);
    return Status::ok();
  } else {
    wg::ClusterLaunch launch(pl.grid, kThreads, bytes,
                             dim3(1, 1, static_cast<unsigned>(pl.cluster)));
    return check(cudaLaunchKernelEx(&launch.cfg, kernel, a),
                 "gpu:wgmma_bwd_weights cluster launch");
  }
}

template <typename T, bool kSplit, bool kCluster>
Status launch_depth(const Args& a, const BwdwPlan& pl) {
  if constexpr (!kCluster)  // (the plan gives ragged problems 64-pixel stages, no clusters)
    if (pl.ragged) return launch_tile<T, kSplit, 64, false, false, true>(a, pl);
  if (pl.three_d)
    return pl.bk == 64 ? launch_tile<T, kSplit, 64, true, kCluster>(a, pl)
                       : launch_tile<T, kSplit, 32, true, kCluster>(a, pl);
  return pl.bk == 64 ? launch_tile<T, kSplit, 64, false, kCluster>(a, pl)
                     : launch_tile<T, kSplit, 32, false, kCluster>(a, pl);
}

template <typename T, bool kSplit, bool kCluster, int BN>
Status launch_bulk(const Args& a, const BwdwPlan& pl) {
  constexpr auto kernel = wgmma_bwd_weights_tma<T, kSplit, kCluster, BN>;
  constexpr int bytes = kTmaSmemBytes<BN>;
  constexpr std::string_view who = "gpu:wgmma_bwd_weights";
  CUtensorMap map_dy, map_x;
  if (auto st = tma::tiled_map<T>(a.dy, a.k, a.pixels, kTmaBK, &map_dy, who); !st) return st;
  if (auto st = tma::im2col_map<T>(a.x, walk_of(a), kTmaBK, &map_x, who); !st) return st;
  const Error opt_in = tc::allow_dynamic_shared_memory<kernel>(bytes);
  if (opt_in != kSuccess) return check(opt_in, "gpu:wgmma_bwd_weights shared memory opt-in");
  if constexpr (!kCluster) {
    kernel<<<pl.grid, kTmaThreads, bytes>>>(a, map_dy, map_x);
    return Status::ok();
  } else {
    wg::ClusterLaunch launch(pl.grid, kTmaThreads, bytes,
                             dim3(1, 1, static_cast<unsigned>(pl.cluster)));
    return check(cudaLaunchKernelEx(&launch.cfg, kernel, a, map_dy, map_x),
                 "gpu:wgmma_bwd_weights cluster launch");
  }
}

template <typename T, bool kSplit, bool kCluster>
Status launch_loader(const Args& a, const BwdwPlan& pl) {
  if (!pl.bulk) return launch_depth<T, kSplit, kCluster>(a, pl);
  return pl.bn == 256   ? launch_bulk<T, kSplit, kCluster, 256>(a, pl)
         : pl.bn == 192 ? launch_bulk<T, kSplit, kCluster, 192>(a, pl)
                        : launch_bulk<T, kSplit, kCluster, 128>(a, pl);
}

// x's pixels [pixels][c] to [pixels][cp] with channels c.. cp - 1 zero (16-bit elements).
__global__ void pad_channels(const std::uint16_t* x, std::uint16_t* to, std::int64_t pixels, int c,
                             int cp) {
  const std::int64_t n = pixels * cp;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t px = i / cp;
    const int ch = static_cast<int>(i - px * cp);
    to[i] = ch < c ? x[px * c + ch] : std::uint16_t{0};
  }
}
// dw [rows][cp] (rows: K x taps) to [rows][c]: each row's first c channels.
__global__ void take_channels(const std::uint16_t* from, std::uint16_t* dw, std::int64_t rows,
                              int c, int cp) {
  const std::int64_t n = rows * c;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t row = i / c;
    dw[i] = from[row * cp + (i - row * c)];
  }
}
unsigned blocks_for(std::int64_t elements) {
  return static_cast<unsigned>(std::min<std::int64_t>((elements + 255) / 256, 4096));
}

template <typename T>
Status launch(const Args& a, const BwdwPlan& pl) {
  Status st = pl.cluster > 1 ? launch_loader<T, false, true>(a, pl)
              : a.partial    ? launch_loader<T, true, false>(a, pl)
                             : launch_loader<T, false, false>(a, pl);
  if (!st) return st;
  if (a.partial)
    tc::launch_reduce_splits(a.partial, static_cast<T*>(a.dw),
                             static_cast<std::int64_t>(a.k) * a.cols, pl.planes, true);
  return check_launch("gpu:wgmma_bwd_weights launch");
}

}  // namespace

Status WgmmaBwdWeightsSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction != Direction::backward_weights)
    return not_applicable(
        "backward-weights only (forward and backward-data: gpu:wgmma_implicit_gemm)");
  if (p.dtype == DType::f32) return not_applicable("f16/bf16 only");
  if (auto s = tc::dense_one_group(p); !s) return s;
  if ((p.c % 8 != 0 || p.k % 8 != 0) && p.spatial_dims == 3)
    return not_applicable(
        "3D with C or K not a multiple of 8 (its element-wise loads are 1D/2D only; "
        "gpu:tc_bwd_weights pads them)");
  if (auto s = tc::bwd_weights_fits(p); !s) return s;
  if (pads_channels(p)) {  // the kernels' offsets over the padded x and dw, and their bytes
    const Problem g = gemm_problem(p);
    if (auto s = tc::bwd_weights_fits(g); !s) return s;
    const double padded_bytes =
        2.0 * static_cast<double>(g.c) *
        (static_cast<double>(g.n) * static_cast<double>(g.input[0]) *
             static_cast<double>(g.input[1]) * static_cast<double>(g.input[2]) +
         static_cast<double>(g.k) * static_cast<double>(g.filter[0]) *
             static_cast<double>(g.filter[1]) * static_cast<double>(g.filter[2]));
    if (padded_bytes > 0x1p50)
      return not_applicable(
          "C padded to 8 channels: the padded x and dw would exceed 2^50 bytes of workspace");
  }
  return wg::hopper_here<wgmma_bwd_weights<cg_bf16, false, 64>>();
}

Result<std::size_t> WgmmaBwdWeightsSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return BwdwPlan(p).workspace_bytes();
}

Result<std::unique_ptr<Plan>> WgmmaBwdWeightsSolver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::unique_ptr<Plan>(new BwdwPlan(p));
}

std::string_view WgmmaBwdWeightsSolver::loader(const Problem& p) {
  if (!WgmmaBwdWeightsSolver().check(p)) return {};
  return BwdwPlan(p).bulk ? "bulk copies" : "cp.async";
}

Status WgmmaBwdWeightsSolver::run(const Plan& plan, const ConvTensors& t,
                                  std::span<std::byte> ws) const {
  const auto& pl = static_cast<const BwdwPlan&>(plan);
  if (ws.size() < pl.workspace_bytes())
    return {StatusCode::internal_error,
            "gpu:wgmma_bwd_weights: workspace smaller than its splits and padded channels"};
  if (auto st = tc::require_aligned16(t, ws.data(), "gpu:wgmma_bwd_weights"); !st) return st;
  Args a = pl.a;
  a.x = t.x.data, a.dy = t.y.data, a.dw = t.w.data;
  a.partial = pl.planes > 1 ? reinterpret_cast<float*>(ws.data()) : nullptr;
  std::uint16_t* padded_dw = nullptr;
  if (pl.pad_c) {  // x padded into the workspace; dw computed there, its channels taken after
    std::byte* at = ws.data() + aligned(pl.partial_bytes());
    auto* padded_x = reinterpret_cast<std::uint16_t*>(at);
    padded_dw = reinterpret_cast<std::uint16_t*>(at + aligned(pl.padded_x_bytes));
    const int c = static_cast<int>(plan.problem.c);
    pad_channels<<<blocks_for(pl.pixels_in * a.c), 256>>>(static_cast<const std::uint16_t*>(a.x),
                                                          padded_x, pl.pixels_in, c, a.c);
    if (auto st = check_launch("gpu:wgmma_bwd_weights channel padding"); !st) return st;
    a.x = padded_x, a.dw = padded_dw;
  }
  const Status st = [&]() -> Status {
    switch (plan.problem.dtype) {
      case DType::bf16:
        return launch<cg_bf16>(a, pl);
      case DType::f16:
        return launch<cg_half>(a, pl);
      case DType::f32:
        break;
    }
    return {StatusCode::internal_error, "gpu:wgmma_bwd_weights: dtype"};
  }();
  if (!st || !pl.pad_c) return st;
  const std::int64_t rows = static_cast<std::int64_t>(a.k) * (a.cols / a.c);
  const int c = static_cast<int>(plan.problem.c);
  take_channels<<<blocks_for(rows * c), 256>>>(padded_dw, static_cast<std::uint16_t*>(t.w.data),
                                               rows, c, a.c);
  return check_launch("gpu:wgmma_bwd_weights channel take");
}

}  // namespace convguard::gpu
