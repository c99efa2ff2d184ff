// gpu:wgmma_implicit_gemm: the two-warpgroup kernel and every launch, forward and backward-data
// (wgmma_implicit_gemm.hpp says what it computes; wgmma_plan.cuh, which of the kernels a problem
// takes). Built for sm_90a alone (CMakeLists.txt: its own object library), so the host code here
// also asks whether the kernel's image loads on the current device.
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
#include "gpu/solvers/wgmma_plan.cuh"
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
    if constexpr (kSplit) {
      store_staged<BM, BN>(a.partial + blockIdx.z * plane, acc, smem, m0, n0, m_all, a.k, pixel,
                           tid, sync);
      wg::allow_dependents();  // the splits' reduction pass (launch below)
    } else {
      store_staged<BM, BN>(y, acc, smem, m0, n0, m_all, a.k, pixel, tid, sync);
    }
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
  if constexpr (kSplit) wg::allow_dependents();  // the splits' reduction pass (launch below)
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
// The bulk-copy loaders (ws 4, a tile per block; 5, persistent): x's im2col map (phased: one per
// stride phase) and the filter's (K-major, or the caller's filter in place for backward-data),
// 128-pixel tiles of 64, 128 or 256
// channels: with one producer thread issuing the copies, the producer warpgroup holds so few
// registers that 128 x 256 fits the cap without spilling (ptxas: 154 registers, 164 persistent).
// kPhased (16-bit, kFilterMn, ws 5 only): strided backward-data's persistent walk over every stride
// phase's tiles (WgPlan::phased_bulk), phase q's A through its own im2col map.
template <typename T, int BN, bool kSplit, bool kFilterMn, bool kPhased = false>
Status launch_bulk_copies(const WgArgs& a, dim3 grid, int ws) {
  constexpr int BM = 128;
  ActivationMaps maps_a{};
  CUtensorMap map_b;
  if (auto st =
          kPhased ? phase_maps<T>(a, BM, &maps_a) : activation_map<T>(a, BM, &maps_a.phase[0]);
      !st)
    return st;
  if (auto st = kFilterMn ? filter_map_mn<T>(a, &map_b) : filter_map<T>(a, BN, &map_b); !st)
    return st;
  if constexpr (!kSplit && sizeof(T) == 2) {  // (f32: tma_ws_for; the staging is 16-bit's)
    if (ws == 5) {
      constexpr int SP = kWsStages<BM, BN, true>;
      // (unphased: the tiles' bulk stores where the plan takes them, WgPlan::bulk_stores)
      if constexpr (!kPhased)
        if (a.bulk_store)
          if (auto st = tiled_map<T>(a.y, a.k, a.m, BM, &maps_a.y); !st) return st;
      return launch_kernel<
          wgmma_forward_ws<T, BM, BN, SP, false, kPhased, true, false, true, kFilterMn>>(
          persistent_grid(grid), kWsThreads, kWsSmemBytes<BM, BN, SP, true>, a, maps_a, map_b);
    }
  }
  if constexpr (kPhased) {
    return {StatusCode::internal_error,
            "gpu:wgmma_implicit_gemm: phased bulk copies persistent only"};
  } else {
    constexpr int SW = kWsStages<BM, BN, false>, bytes = kWsSmemBytes<BM, BN, SW, false>;
    constexpr auto kernel =
        wgmma_forward_ws<T, BM, BN, SW, kSplit, false, false, false, true, kFilterMn>;
    if constexpr (kSplit) {
      if (a.split_cluster) {  // the splits of a tile as one cluster along z (WgArgs)
        const Error opt_in = tc::allow_dynamic_shared_memory<kernel>(bytes);
        if (opt_in != kSuccess)
          return check(opt_in, "gpu:wgmma_implicit_gemm shared memory opt-in");
        // A cluster that cannot be placed (e.g. a partitioned GPU) fails here with a status; its
        // error is cleared so that no later launch check reports it as its own.
        wg::ClusterLaunch launch(grid, kWsThreads, bytes, dim3(1, 1, grid.z));
        const Error launched = cudaLaunchKernelEx(&launch.cfg, kernel, a, maps_a, map_b);
        if (launched != kSuccess) (void)cudaGetLastError();
        return check(launched, "gpu:wgmma_implicit_gemm launch (splits in a cluster)");
      }
    }
    return launch_kernel<kernel>(grid, kWsThreads, bytes, a, maps_a, map_b);
  }
}

template <typename T, int BM, int BN, bool kRagged, int S, bool kSplit, bool kPhased,
          bool kFilterMn, bool k3D>
Status launch_stages(const WgArgs& a, dim3 grid, int ws) {
  if constexpr (!kRagged && !k3D && BM == 128 && !kPhased)
    if (ws == 4 || ws == 5) return launch_bulk_copies<T, BN, kSplit, kFilterMn>(a, grid, ws);
  if (a.split_cluster)  // (WgPlan::split_clusters takes them for the bulk-copy kernel only)
    return {StatusCode::internal_error,
            "gpu:wgmma_implicit_gemm: splits in clusters without the bulk-copy kernel"};
  if constexpr (!kRagged && !k3D && BM == 128 && kPhased && kFilterMn && !kSplit && sizeof(T) == 2)
    if (ws == 5) return launch_bulk_copies<T, BN, false, true, true>(a, grid, ws);
  if constexpr (!kRagged && !kFilterMn && !k3D && sizeof(T) == 2 && BM * BN <= 128 * 128) {
    const CUtensorMap none{};
    const ActivationMaps no_maps{};
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
        return check(cudaLaunchKernelEx(&launch.cfg, kernel, a, no_maps, map),
                     "gpu:wgmma_implicit_gemm launch");
      }
    }
    if constexpr (BM == 128 && !kSplit && !kPhased) {
      if (ws == 2) {
        constexpr int SP = kWsStages<BM, BN, true>;
        return launch_kernel<wgmma_forward_ws<T, BM, BN, SP, false, false, true, false>>(
            persistent_grid(grid), kWsThreads, kWsSmemBytes<BM, BN, SP, true>, a, no_maps, none);
      }
    }
    constexpr int SW = kWsStages<BM, BN, false>;
    if (ws != 0)
      return launch_kernel<wgmma_forward_ws<T, BM, BN, SW, kSplit, kPhased, false, false>>(
          grid, kWsThreads, kWsSmemBytes<BM, BN, SW, false>, a, no_maps, none);
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
  return a.partial || a.split_cluster
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
                             pl.used, true);
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

std::string_view WgmmaImplicitGemmSolver::kernel(const Problem& p) {
  if (!WgmmaImplicitGemmSolver(p.dtype == DType::f32).check(p)) return {};
  const WgPlan pl(p);
  if (pl.pixels) return "pixel-wide";
  if (pl.a.phases) return pl.ws == 5 ? "phased walk" : "phased grid";
  if (pl.ws == 5)
    return pl.a.bulk_store ? "persistent bulk copies" : "persistent bulk copies, thread stores";
  if (pl.ws == 4) return pl.a.split_cluster ? "bulk copies, splits in clusters" : "bulk copies";
  return pl.ws >= 1 ? "warp-specialised" : "two warpgroups";
}

std::string WgmmaImplicitGemmSolver::tiles(const Problem& p) {
  if (!WgmmaImplicitGemmSolver(p.dtype == DType::f32).check(p)) return {};
  const WgPlan pl(p);
  if (pl.pixels) return "pixel-wide, " + std::to_string(pl.pixels) + " pixels";
  return std::to_string(pl.tile.bm) + " x " + std::to_string(pl.tile.bn) + " tiles, split " +
         std::to_string(pl.used);
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
  a.partial = pl.splits > 1 && !pl.a.split_cluster
                  ? reinterpret_cast<float*>(ws.data() + pl.filter_bytes)
                  : nullptr;
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
