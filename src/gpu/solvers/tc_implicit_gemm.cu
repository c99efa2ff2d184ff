#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tc_implicit_gemm.hpp"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"

namespace convguard::gpu {
namespace {

using namespace tc;

// A tile row is kChunks 16-byte chunks: 32 f16/bf16 or 16 f32 (TF32) reduction elements.
// Output tiles are 128 pixels x BN channels, BN 128 or (for narrow layers and layers whose
// 128-wide tiles would not give every SM a block) 64.
constexpr int kBM = 128, kChunks = 4, kStages = 4;
template <typename T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte chunk
template <typename T>
constexpr int kBK = kChunks* kVec<T>;  // reduction elements per stage
constexpr int kWarpsM = 2, kWarpsN = 2, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWM = kBM / kWarpsM, kMI = kWM / 16;  // 64 rows and 4 mma rows per warp
constexpr int kLoadsA = kBM * kChunks / kThreads;   // A chunks per thread per stage
static_assert(kThreads % kChunks == 0, "one chunk column per thread");
template <int BN>
struct TileN {
  static constexpr int kWN = BN / kWarpsN, kNI = kWN / 8;  // per warp: 64 or 32 columns
  static constexpr int kLoadsB = BN * kChunks / kThreads;  // B chunks per thread per stage
};

// Tile rows are kChunks 16-byte chunks; chunk j of row i is stored at j ^ ((i >> 1) & 3), so the
// 8 rows one ldmatrix reads fall in 8 different bank groups.
__device__ __forceinline__ int swizzle(int row, int chunk) {
  return row * kChunks + (chunk ^ ((row >> 1) & 3));
}

// kRagged: the reduction's channel count c is not a multiple of a 16-byte chunk (C = 3 first
// layers, C = 20, ...). Each tap's channels are then padded to cp (zeros), and every chunk is
// loaded element by element (load_ragged: a channel run may start anywhere), into registers
// while the previous stage is computed and stored to shared memory after it; the aligned path
// (cp.async, 16 bytes) is unchanged. The ragged variant also takes an odd output channel count
// (element-wise stores). kPhased: strided backward-data, blockIdx.z is the stride phase, whose
// geometry and output grid replace the problem's (a template parameter, so the other kernels read
// their geometry straight from the parameters: selecting it at run time cost 15% on ResNet-50's
// stride-1 3x3 layers on the H100). k3D: a 3D problem (a.depth): a row's image index counts
// (n, od) and its tap rows (t, r) (tc::Depth, tap_source_3d); phased, the depth's od, pd and
// taps_r are the phase's (a.phase_depth) and its pixels land on dx's depth grid too.
template <typename T, int BN, bool kRagged, bool kPhased, bool k3D = false>
__global__ void __launch_bounds__(kThreads) tc_forward(const __grid_constant__ Args a) {
  constexpr int kWN = TileN<BN>::kWN, kNI = TileN<BN>::kNI, kLoadsB = TileN<BN>::kLoadsB;
  extern __shared__ uint4 smem_raw[];  // kStages stages of (kBM + BN) rows (dynamic: > 48 KiB)
  auto smem = reinterpret_cast<uint4(*)[(kBM + BN) * kChunks]>(smem_raw);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  // The geometry: the problem's, or (strided backward-data) this block's stride phase.
  // Copied field by field: copying the struct (or a reference to it) takes the parameters'
  // address, and every later use becomes a load through it (PTX: 98 loads, 15% slower).
  Geo g;
  auto take = [&g](const Geo& from) {
    g.oh = from.oh, g.ow = from.ow, g.r = from.r, g.s = from.s, g.ph = from.ph, g.pw = from.pw;
    g.m = from.m, g.kd = from.kd, g.wrow = from.wrow, g.w_off = from.w_off;
    g.qh = from.qh, g.qw = from.qw;
  };
  PhaseDepth dp{};  // k3D: the depth's od, pd and taps_r (phased: the phase's) and qd
  if constexpr (k3D) dp = {a.depth.od, a.depth.pd, a.depth.taps_r, 0};
  if constexpr (kPhased) {
#pragma unroll
    for (int q = 0; q < kMaxPhases; ++q)
      if (q == static_cast<int>(blockIdx.z)) take(a.phase[q]);
    if constexpr (k3D) take_phase_depth(a, dp);
  } else {
    take(a.g);
  }
  const int kt0 = kPhased ? 0 : blockIdx.z * a.tiles_per_split;  // first reduction tile
  const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * BN;
  if constexpr (kPhased)
    if (m0 >= g.m) return;  // phases have fewer pixels than the grid's widest
  const T* x = static_cast<const T*>(a.x);
  const T* w = static_cast<const T*>(a.w) + g.w_off;

  // Each thread loads kLoadsA A and kLoadsB B chunks per stage: fixed rows, one chunk column.
  const int chunk = tid % kChunks;
  int a_img[kLoadsA], a_id0[kLoadsA], a_ih0[kLoadsA], a_iw0[kLoadsA];
  bool a_ok[kLoadsA], b_ok[kLoadsB];
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) b_ok[i] = n0 + (tid + i * kThreads) / kChunks < a.k;
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    const int row = (tid + i * kThreads) / kChunks;
    const int m = m0 + row;
    a_ok[i] = m < g.m;
    const int mm = a_ok[i] ? m : 0;
    const int ow = mm % g.ow, oh = (mm / g.ow) % g.oh;
    a_img[i] = mm / (g.ow * g.oh);
    if constexpr (k3D) depth_of_row(a_img[i], dp.od, a.depth.sd, dp.pd, a_img[i], a_id0[i]);
    a_ih0[i] = oh * a.sh - g.ph;
    a_iw0[i] = ow * a.sw - g.pw;
  }
  // Reduction position (r, s, c) of this thread's chunk, advanced by kBK per stage loaded
  // (stages are loaded in order): no divisions in the main loop. kk and c count in the padded
  // space (cp channels per tap; cp == c when aligned).
  const int tiles_all = (g.kd + kBK<T> - 1) / kBK<T>;
  const int tiles = min(tiles_all - kt0, a.tiles_per_split);  // this split's reduction tiles
  const int s_taps = g.s > 0 ? g.s : 1;                       // a phase without taps loads nothing
  int kk = kt0 * kBK<T> + chunk * kVec<T>, c = kk % a.cp, s = (kk / a.cp) % s_taps,
      r = kk / (a.cp * s_taps);
  // A sources for the current tap (r, s): recomputed only when the tap changes (every C / kBK
  // stages when C >= kBK); within a tap each row's source just advances by kBK channels.
  const T* a_src[kLoadsA];
  bool a_val[kLoadsA];
  auto at_tap = [&] {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      if constexpr (k3D) {
        a_src[i] =
            tap_source_3d(x, a.depth.d, a.depth.dd, dp.taps_r, a.h, a.w_, a.c, a_img[i], a_id0[i],
                          a_ih0[i], a_iw0[i], r, s, a.dh, a.dw, c, a_ok[i], a_val[i]);
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
    b_src[i] = w + static_cast<std::int64_t>(n0 + (tid + i * kThreads) / kChunks) * g.wrow;
  auto advance = [&] {
    kk += kBK<T>;
    c += kBK<T>;
    if (c < a.cp) {
#pragma unroll
      for (int i = 0; i < kLoadsA; ++i) a_src[i] += kBK<T>;
      return;
    }
    while (c >= a.cp) {
      c -= a.cp;
      if (++s == g.s) s = 0, ++r;
    }
    at_tap();
  };
  auto load = [&](int stage) {  // aligned: 16-byte cp.async
    const bool in_k = kk < g.kd;
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const bool av = a_val[i] && in_k;
      cp_async16(&smem[stage][swizzle((tid + i * kThreads) / kChunks, chunk)], av ? a_src[i] : x,
                 av);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const bool bv = b_ok[i] && in_k;
      cp_async16(&smem[stage][kBM * kChunks + swizzle((tid + i * kThreads) / kChunks, chunk)],
                 bv ? b_src[i] + kk : w, bv);
    }
    advance();
  };
  // Ragged: fetch into registers, store after the current stage's mma.
  uint4 ra[kRagged ? kLoadsA : 1], rb[kRagged ? kLoadsB : 1];
  auto fetch = [&] {
    const bool in_k = kk < g.kd;
    const int n = a.c - c;  // valid channels of this chunk (<= 0: all padding)
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) ra[i] = load_ragged(a_src[i], a_val[i] && in_k ? n : 0);
    const std::int64_t off = (static_cast<std::int64_t>(r) * g.s + s) * a.c + c;
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) rb[i] = load_ragged(b_src[i] + off, b_ok[i] && in_k ? n : 0);
    advance();
  };
  auto store = [&](int stage) {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i)
      smem[stage][swizzle((tid + i * kThreads) / kChunks, chunk)] = ra[i];
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i)
      smem[stage][kBM * kChunks + swizzle((tid + i * kThreads) / kChunks, chunk)] = rb[i];
  };

  float acc[kMI][kNI][4] = {};
  // kStages-deep pipeline: tiles kt+1 .. kt+kStages-1 are in flight while tile kt is computed.
  // One barrier per tile: the stage loaded at step kt is the one computed at step kt-1.
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if constexpr (kRagged) {
      if (st < tiles) fetch(), store(st);
    } else {
      if (st < tiles) load(st);
      cp_async_commit();
    }
  }
  for (int kt = 0; kt < tiles; ++kt) {
    const bool more = kt + kStages - 1 < tiles;
    if constexpr (kRagged) {
      __syncthreads();
      if (more) fetch();
    } else {
      cp_async_wait<kStages - 2>();
      __syncthreads();
      if (more) load((kt + kStages - 1) % kStages);
      cp_async_commit();
    }
    const uint4* A = smem[kt % kStages];
    const uint4* B = smem[kt % kStages] + kBM * kChunks;
#pragma unroll
    for (int ks = 0; ks < kChunks / 2; ++ks) {
      std::uint32_t af[kMI][4], bf[kNI / 2][4];
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) {
        const int row = warp_m * kWM + mi * 16 + lane % 16;
        ldmatrix_x4(af[mi], &A[swizzle(row, ks * 2 + lane / 16)]);
        round_operands<T>(af[mi]);
      }
#pragma unroll
      for (int nj = 0; nj < kNI / 2; ++nj) {
        const int row = warp_n * kWN + nj * 16 + lane % 8 + (lane / 16) * 8;
        ldmatrix_x4(bf[nj], &B[swizzle(row, ks * 2 + (lane / 8) % 2)]);
        round_operands<T>(bf[nj]);
      }
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) mma<T>(acc[mi][ni], af[mi], &bf[ni / 2][(ni % 2) * 2]);
    }
    // Ragged: the stage computed at step kt-1 is free since this step's barrier.
    if constexpr (kRagged)
      if (more) store((kt + kStages - 1) % kStages);
  }
  if constexpr (!kRagged) cp_async_wait<0>();
  // Epilogue: two adjacent output channels per register pair, straight to NHWC y, or (split-K)
  // to this split's fp32 partial sums; an odd channel count stores element by element, and a
  // phase's pixels land on its stride grid of y.
  T* y = static_cast<T*>(a.y);
  // Each row's pixel first (a phase's: three divisions, once per row, not per channel pair).
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m0 + warp_m * kWM + mi * 16 + lane / 4 + half * 8;
      if (row >= g.m) continue;
      std::int64_t pixel = row;
      if constexpr (kPhased) pixel = phase_pixel<k3D>(a, row, g.oh, g.ow, g.qh, g.qw, dp);
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        const int col = n0 + warp_n * kWN + ni * 8 + (lane % 4) * 2;
        if (col >= a.k) continue;
        const std::int64_t off = pixel * a.k + col;
        const float v0 = acc[mi][ni][half * 2], v1 = acc[mi][ni][half * 2 + 1];
        if constexpr (kRagged)
          store_result_ragged(y, a.partial, static_cast<std::int64_t>(g.m) * a.k, off, v0, v1,
                              col + 1 < a.k, a.k % 2 == 0);
        else
          store_result(y, a.partial, static_cast<std::int64_t>(g.m) * a.k, off, v0, v1);
      }
    }
}

// Tile width: 64 channels for layers of at most 64 (a 128-wide tile would be half empty) and for
// layers whose 128-wide tiles would leave SMs without a block (ResNet's res4/res5: 98 and 52
// tiles on 132 SMs); else 128.
int tile_n(std::int64_t m, std::int64_t k) {
  if (k <= 64) return 64;
  const std::int64_t blocks = ((m + kBM - 1) / kBM) * ((k + 127) / 128);
  return blocks < sm_count() ? 64 : 128;
}

// Splits of the reduction when the output tiles alone would leave most SMs idle (deep, small
// layers such as ResNet's last stage: 13 x 4 tiles on 132 SMs): about one block per SM, each
// split at least 8 reduction tiles.
int split_count(std::int64_t m, std::int64_t k, std::int64_t kd, int bk) {
  const int sms = sm_count(), bn = tile_n(m, k);
  const std::int64_t blocks = ((m + kBM - 1) / kBM) * ((k + bn - 1) / bn);
  const std::int64_t tiles = (kd + bk - 1) / bk;
  // Measured: splitting 98 128-wide tiles on 132 SMs lost 17%; 104 64-wide tiles unsplit ran
  // res5 at 0.29x of cuDNN against 0.36x for 52 128-wide tiles split in 3.
  if (sms == 0 || blocks >= sms) return 1;
  const std::int64_t want = (sms + blocks - 1) / blocks;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({want, tiles / 8, 16})));
}

}  // namespace

int stage_elements(DType dt) {
  return dt == DType::f32 ? kBK<float> : kBK<cg_half>;
}

template <typename T, int BN, bool kRagged, bool kPhased, bool k3D>
Status launch_tiles(const Args& a, dim3 grid) {
  constexpr int bytes = kStages * (kBM + BN) * kChunks * 16;
  constexpr auto kernel = tc_forward<T, BN, kRagged, kPhased, k3D>;
  const Error opt_in = allow_dynamic_shared_memory<kernel>(bytes);
  if (opt_in != kSuccess) return check(opt_in, "gpu:tc_implicit_gemm shared memory opt-in");
  kernel<<<grid, kThreads, bytes>>>(a);
  return Status::ok();
}

template <typename T, bool kRagged, bool kPhased, bool k3D = false>
Status launch_width(const Args& a, dim3 grid, int bn) {
  return bn == 64 ? launch_tiles<T, 64, kRagged, kPhased, k3D>(a, grid)
                  : launch_tiles<T, 128, kRagged, kPhased, k3D>(a, grid);
}

template <typename T>
Status launch(const Args& a, dim3 grid, int used, int bn, bool ragged, bool three_d) {
  const Status st = three_d && a.phases ? (ragged ? launch_width<T, true, true, true>(a, grid, bn)
                                                  : launch_width<T, false, true, true>(a, grid, bn))
                    : three_d           ? (ragged ? launch_width<T, true, false, true>(a, grid, bn)
                                                  : launch_width<T, false, false, true>(a, grid, bn))
                    : a.phases          ? (ragged ? launch_width<T, true, true>(a, grid, bn)
                                                  : launch_width<T, false, true>(a, grid, bn))
                                        : (ragged ? launch_width<T, true, false>(a, grid, bn)
                                                  : launch_width<T, false, false>(a, grid, bn));
  if (!st) return st;
  if (a.partial) {
    const std::int64_t elements = static_cast<std::int64_t>(a.g.m) * a.k;
    const unsigned blocks =
        static_cast<unsigned>(std::min<std::int64_t>((elements + 255) / 256, 4096));
    reduce_splits<<<blocks, 256>>>(a.partial, static_cast<T*>(a.y), elements, used);
  }
  return check_launch("gpu:tc_implicit_gemm launch");
}

std::string_view TcImplicitGemmSolver::id() const {
  return tf32_ ? "gpu:tc_implicit_gemm:tf32" : "gpu:tc_implicit_gemm";
}

Accuracy TcImplicitGemmSolver::accuracy(const Problem& p) const {
  Accuracy a = GpuSolver::accuracy(p);
  if (tf32_) a.operand_roundoff = kTf32Roundoff;
  return a;
}

Status TcImplicitGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction == Direction::backward_weights)
    return not_applicable("forward and backward-data only");
  if (tf32_ && p.dtype != DType::f32)
    return not_applicable("the TF32 variant is for f32 problems (f16/bf16: gpu:tc_implicit_gemm)");
  if (!tf32_ && p.dtype == DType::f32)
    return not_applicable(
        "f16/bf16 only (f32 on tensor cores computes in TF32: gpu:tc_implicit_gemm:tf32)");
  if (auto s = dense_one_group(p); !s) return s;
  if (auto s = backward_data_fits(p); !s) return s;
  return gemm_fits(p);
}

namespace {

// Everything a launch needs but the tensors: computed once per plan. Backward-data is planned as
// its forward problem: src dy (OH x OW, K channels), the flipped filter, dst dx (H x W, C); with
// stride > 1, as one forward problem per stride phase, all in one launch (blockIdx.z: phase).
struct TcPlan : Plan {
  explicit TcPlan(const Problem& p) : Plan(p), backward(p.direction == Direction::backward_data) {
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    elem = size_of(p.dtype);
    const int vec = 16 / static_cast<int>(elem);
    auto padded = [&](std::int64_t ch) { return i32((ch + vec - 1) / vec * vec); };
    a.n = i32(p.n);
    Geo& g = a.g;
    if (backward) {
      int count = 1;
      filter_bytes = plan_backward_data(p, padded(p.k), a, &count);
      if (count == 1) g = a.phase[0];  // one phase: dense dx, split-K allowed
      three_d = p.spatial_dims == 3;   // the k3D kernel, phased when strided
    } else {
      a.h = i32(p.input[1]), a.w_ = i32(p.input[2]), a.c = i32(p.c), a.k = i32(p.k);
      a.sh = i32(p.stride[1]), a.sw = i32(p.stride[2]);
      a.dh = i32(p.dilation[1]), a.dw = i32(p.dilation[2]);
      a.cp = padded(p.c);
      g.oh = i32(p.output(1)), g.ow = i32(p.output(2));
      g.r = i32(p.filter[1]), g.s = i32(p.filter[2]);
      g.ph = i32(p.pad_begin[1]), g.pw = i32(p.pad_begin[2]);
      g.m = a.n * g.oh * g.ow;
      if (p.spatial_dims == 3) {  // the k3D kernel: rows over (n, od), tap rows over (t, r)
        three_d = true;
        a.depth = depth_of(p);
        g.m *= a.depth.od;
        g.r *= i32(p.filter[0]);
      }
      g.kd = g.r * g.s * a.cp;
      g.wrow = g.r * g.s * a.c;
    }
    ragged = a.cp != a.c || a.k % 2 != 0;  // the aligned kernel stores channel pairs
    const int bk = stage_elements(p.dtype);
    if (a.phases) {
      // No split: the phases fill the GPU (ResNet-50's res5 stride-2 layer: 4 x 104 blocks).
      std::int64_t total = 0;
      int widest = 0;
      for (int q = 0; q < a.phases; ++q)
        total += a.phase[q].m, widest = std::max(widest, a.phase[q].m);
      a.tiles_per_split = 2147483647;
      bn = tile_n(total, a.k);
      grid = dim3(static_cast<unsigned>((widest + kBM - 1) / kBM),
                  static_cast<unsigned>((a.k + bn - 1) / bn), static_cast<unsigned>(a.phases));
      return;
    }
    splits = split_count(g.m, a.k, g.kd, bk);
    const int tiles = (g.kd + bk - 1) / bk;
    a.tiles_per_split = std::max(1, (tiles + splits - 1) / splits);
    used = (tiles + a.tiles_per_split - 1) / a.tiles_per_split;  // no empty split
    if (used < 1) used = 1;
    bn = tile_n(g.m, a.k);
    grid = dim3(static_cast<unsigned>((g.m + kBM - 1) / kBM),
                static_cast<unsigned>((a.k + bn - 1) / bn), static_cast<unsigned>(used));
  }
  // Split-K's fp32 partial sums.
  std::size_t partial_bytes() const {
    return splits > 1 ? static_cast<std::size_t>(splits) * a.g.m * a.k * sizeof(float) : 0;
  }
  std::size_t workspace() const { return filter_bytes + partial_bytes(); }
  Args a{};
  bool backward, ragged = false, three_d = false;
  int splits = 1, used = 1, bn = 128;
  std::size_t elem = 2, filter_bytes = 0;
  dim3 grid;
};

}  // namespace

Result<std::size_t> TcImplicitGemmSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return TcPlan(p).workspace();
}

Result<std::unique_ptr<Plan>> TcImplicitGemmSolver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::unique_ptr<Plan>(new TcPlan(p));
}

Status TcImplicitGemmSolver::run(const Plan& plan, const ConvTensors& t,
                                 std::span<std::byte> ws) const {
  const Problem& p = plan.problem;
  const auto& tp = static_cast<const TcPlan&>(plan);
  if (ws.size() < tp.workspace())
    return {StatusCode::internal_error, "gpu:tc_implicit_gemm: workspace smaller than its plan's"};
  Args a = tp.a;
  // Backward-data: dx = forward(dy, flipped w) per stride phase (a.k is the caller's C, a.c its K).
  Operands o{};
  if (auto st = forward_operands(p, a.phases ? a.phase : &a.g, a.phase_depth,
                                 a.phases ? a.phases : 1, t, ws.data(), &o);
      !st)
    return st;
  a.x = o.x, a.w = o.w, a.y = o.y;
  a.partial = tp.splits > 1 ? reinterpret_cast<float*>(ws.data() + tp.filter_bytes) : nullptr;
  switch (p.dtype) {
    case DType::f32:
      return launch<float>(a, tp.grid, tp.used, tp.bn, tp.ragged, tp.three_d);
    case DType::bf16:
      return launch<cg_bf16>(a, tp.grid, tp.used, tp.bn, tp.ragged, tp.three_d);
    case DType::f16:
      return launch<cg_half>(a, tp.grid, tp.used, tp.bn, tp.ragged, tp.three_d);
  }
  return {StatusCode::internal_error, "dtype"};
}

}  // namespace convguard::gpu
