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
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu {
namespace {

using tc::cp_async16;
using tc::smem_addr;

// A stage holds kBK = 64 pixels of both operands. An operand's stage is a row of 64-wide atoms
// (64 channels of dy, or 64 columns (r, s, c) of im2col(x)), each 64 pixel rows of 128 bytes
// (kAtomBytes), 16-byte chunk j of pixel row i at j ^ (i % 8): eight 1024-byte swizzle atoms of
// 8 rows one after another, so the descriptor's SBO (between 8-pixel groups) is 1024 bytes and its
// LBO (between 64-wide atoms) kAtomBytes; a k16 step of the reduction is 2048 bytes further.
// As many stages as a block's 227 KiB hold (one block per SM): 7 of 32 KiB for 128 x 128, 5 of
// 40 KiB for 64 x 256.
constexpr int kBK = 64, kThreads = 256, kRowBytes = 128, kAtomBytes = kBK * kRowBytes;
template <int BM, int BN>
constexpr int kStageBytes = (BM + BN) * kRowBytes;
template <int BM, int BN>
constexpr int kStages = (227 * 1024 - 1024) / kStageBytes<BM, BN>;
template <int BM, int BN>
constexpr int kSmemBytes = kStages<BM, BN> * kStageBytes<BM, BN> + 1024;  // + slack to align

// n / d and n % d for 0 <= n < 2^31 by a multiply and a shift (d's magic computed on the host):
// the loader decomposes each pixel row into (image, oh, ow) every stage.
struct FastDiv {
  int d;
  unsigned m;
  int l;
};
FastDiv fast_div(int d) {
  int l = 0;
  while ((std::int64_t{1} << l) < d) ++l;
  const std::uint64_t m = ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << l) - d)) / d + 1;
  return {d, static_cast<unsigned>(m), l};
}
__device__ __forceinline__ int fdiv(int n, FastDiv f) {
  return static_cast<int>((__umulhi(static_cast<unsigned>(n), f.m) + static_cast<unsigned>(n)) >>
                          f.l);
}

struct Args {
  const void* x;
  const void* dy;
  void* dw;
  int h, w_, c, k, s, sh, sw, ph, pw, dh, dw_;
  FastDiv ow, oh, cdiv, sdiv;  // divisors: OW, OH (pixel -> (image, oh, ow)), C and S (columns)
  int pixels;                  // N*OH*OW: the reduction
  int cols;                    // R*S*C: dw's columns
  int tiles_per_split;         // stages of kBK pixels each blockIdx.z reduces
  float* partial;              // splits' fp32 partial sums [split][k][cols]; null: dw directly
};

// Byte offset of chunk j of pixel row `row` in atom `atom` of an operand's stage.
__device__ __forceinline__ int chunk_at(int atom, int row, int j) {
  return atom * kAtomBytes + row * kRowBytes + ((j ^ (row & 7)) << 4);
}

// BM rows of dw (output channels) x BN columns per block; warpgroup g computes rows 64 g.. of all
// BN columns (BM 128), or all 64 rows of columns WN g.. (BM 64, K <= 64).
template <typename T, int BM, int BN, bool kSplit>
__global__ void __launch_bounds__(kThreads) wgmma_bwd_weights(const __grid_constant__ Args a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int WN = BM == 128 ? BN : BN / 2;  // a warpgroup's columns: m64nWNk16
  constexpr int kColsA = BM / 8, kColsB = BN / 8;  // 16-byte chunks in a pixel row
  constexpr int kLoadsA = kBK * kColsA / kThreads, kLoadsB = kBK * kColsB / kThreads;
  constexpr int kStepA = kThreads / kColsA, kStepB = kThreads / kColsB;  // rows between loads
  constexpr int kS = kStages<BM, BN>, kAhead = kS - 2;
  extern __shared__ uint4 smem_raw[];
  // Every atom must start 1024-byte aligned: the swizzle is computed from the address bits.
  char* smem = reinterpret_cast<char*>(smem_raw) + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const std::uint32_t base = smem_addr(smem);
  const int tid = threadIdx.x, group = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);

  // Each thread loads one fixed chunk column of each operand: dy's channels kc..kc+7 and x's
  // column (r, s, c..c+7), decomposed once; rows row_a + i kStepA and row_b + i kStepB.
  const int ja = tid % kColsA, row_a = tid / kColsA, jb = tid % kColsB, row_b = tid / kColsB;
  const int kc = m0 + ja * 8, col = n0 + jb * 8;
  const bool k_ok = kc < a.k, col_ok = col < a.cols;
  const int cc = col_ok ? col : 0, rs = fdiv(cc, a.cdiv), c = cc - rs * a.c;
  const int r = fdiv(rs, a.sdiv), s = rs - r * a.s;
  const int r_off = r * a.dh - a.ph, s_off = s * a.dw_ - a.pw;
  const int tiles_all = (a.pixels + kBK - 1) / kBK;
  const int kt0 = blockIdx.z * a.tiles_per_split;
  const int tiles = min(tiles_all - kt0, a.tiles_per_split);  // this split's stages
  int p_next = kt0 * kBK;                                     // first pixel of the next load
  auto load = [&](int stage) {
    char* A = smem + stage * kStageBytes<BM, BN>;
    char* B = A + BM * kRowBytes;  // after A's BM / 64 atoms of kAtomBytes
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int row = row_a + i * kStepA, p = p_next + row;
      const bool v = k_ok && p < a.pixels;
      const T* src = dy + static_cast<std::int64_t>(p) * a.k + kc;
      cp_async16(A + chunk_at(ja / 8, row, ja % 8), v ? src : dy, v);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int row = row_b + i * kStepB, p = p_next + row;
      const bool p_ok = col_ok && p < a.pixels;
      const int pp = p_ok ? p : 0, t = fdiv(pp, a.ow), ow = pp - t * a.ow.d;
      const int n = fdiv(t, a.oh), oh = t - n * a.oh.d;
      const int ih = oh * a.sh + r_off, iw = ow * a.sw + s_off;
      const bool v = p_ok && ih >= 0 && ih < a.h && iw >= 0 && iw < a.w_;
      const T* src = x + ((static_cast<std::int64_t>(n) * a.h + ih) * a.w_ + iw) * a.c + c;
      cp_async16(B + chunk_at(jb / 8, row, jb % 8), v ? src : x, v);
    }
    p_next += kBK;
  };

  float acc[WN / 2] = {};
  // Stages kt+1 .. kt+kAhead are loading while stage kt is multiplied; the stage loaded at step kt
  // last held stage kt-2, whose wgmma both warpgroups finished (wait<1> at the end of step kt-1)
  // before this step's barrier, as in gpu:wgmma_implicit_gemm.
#pragma unroll
  for (int st = 0; st < kAhead; ++st) {
    if (st < tiles) load(st);
    tc::cp_async_commit();
  }
  const std::uint32_t a_off = BM == 128 ? group * kAtomBytes : 0;
  const std::uint32_t b_off = BM * kRowBytes + (BM == 128 ? 0 : group * (WN / 64) * kAtomBytes);
  for (int kt = 0; kt < tiles; ++kt) {
    tc::cp_async_wait<kAhead - 1>();  // this thread's chunks of stage kt have landed
    wg::fence_proxy_async();          // ... and are visible to the tensor cores
    __syncthreads();
    const std::uint32_t stage = base + (kt % kS) * kStageBytes<BM, BN>;
    wg::fence_operands();
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks)
      wg::mma<T, WN, true>(acc, wg::smem_desc_mn(stage + a_off + ks * 2048, kAtomBytes),
                           wg::smem_desc_mn(stage + b_off + ks * 2048, kAtomBytes), 1);
    wg::commit();
    if (kt + kAhead < tiles) load((kt + kAhead) % kS);
    tc::cp_async_commit();
    wg::wait<1>();
  }
  wg::wait<0>();
  tc::cp_async_wait<0>();

  // Epilogue: register 4j + 2h + {0, 1} holds row 16 warp + lane / 4 + 8h, columns 8j + 2 (lane %
  // 4) + {0, 1} of the warpgroup's block; pairs to KRSC dw or this split's partial sums.
  T* dw = static_cast<T*>(a.dw);
  const std::int64_t plane = static_cast<std::int64_t>(a.k) * a.cols;
  const int row0 = m0 + (BM == 128 ? group * 64 : 0) + warp * 16 + lane / 4;
  const int col0 = n0 + (BM == 128 ? 0 : group * WN) + (lane % 4) * 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + h * 8;
    if (row >= a.k) continue;
#pragma unroll
    for (int j = 0; j < WN / 8; ++j) {
      const int cx = col0 + j * 8;
      if (cx >= a.cols) continue;
      tc::store_result(dw, kSplit ? a.partial : nullptr, plane,
                       static_cast<std::int64_t>(row) * a.cols + cx, acc[4 * j + 2 * h],
                       acc[4 * j + 2 * h + 1]);
    }
  }
#else
  (void)a;  // no sm_90a code in this pass: the host never launches it (check() declines)
#endif
}

struct Tile {
  int bm, bn;
};

// For measuring: CONVGUARD_WGMMA_BWDW_TILE=128x128 or 64x256 forces the tile, and
// CONVGUARD_WGMMA_BWDW_SPLIT=N the split count (1 to 256).
int forced_env(const char* name, int lo, int hi) {
  const char* text = std::getenv(name);
  if (!text) return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end != text && *end == 0 && v >= lo && v <= hi) return static_cast<int>(v);
  std::fprintf(stderr, "convguard: %s='%s' ignored (%d to %d)\n", name, text, lo, hi);
  return 0;
}

// 64 x 256 when K fits one 64-row block (ResNet's 64-channel layers: no half-empty 128-row
// tiles), else 128 x 128.
Tile tile_for(std::int64_t k) {
  static const int forced = [] {
    const char* text = std::getenv("CONVGUARD_WGMMA_BWDW_TILE");
    if (!text) return 0;
    if (std::string_view(text) == "128x128") return 128;
    if (std::string_view(text) == "64x256") return 64;
    std::fprintf(stderr, "convguard: CONVGUARD_WGMMA_BWDW_TILE='%s' ignored (128x128, 64x256)\n",
                 text);
    return 0;
  }();
  if (forced) return forced == 64 ? Tile{64, 256} : Tile{128, 128};
  return k <= 64 ? Tile{64, 256} : Tile{128, 128};
}

// Splits of the reduction: one block per SM (the stages take 225 KiB), as many splits as fill the
// SMs once, each at least 8 stages, at most 256.
int split_count(std::int64_t out_tiles, std::int64_t stages) {
  static const int forced = forced_env("CONVGUARD_WGMMA_BWDW_SPLIT", 1, 256);
  if (forced) return static_cast<int>(std::min<std::int64_t>(forced, stages));
  const std::int64_t want = tc::sm_count() / out_tiles;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({want, stages / 8, 256})));
}

struct BwdwPlan : Plan {
  explicit BwdwPlan(const Problem& p) : Plan(p) {
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    a.h = i32(p.input[1]), a.w_ = i32(p.input[2]), a.c = i32(p.c), a.k = i32(p.k);
    a.s = i32(p.filter[2]);
    a.sh = i32(p.stride[1]), a.sw = i32(p.stride[2]);
    a.ph = i32(p.pad_begin[1]), a.pw = i32(p.pad_begin[2]);
    a.dh = i32(p.dilation[1]), a.dw_ = i32(p.dilation[2]);
    a.ow = fast_div(i32(p.output(2))), a.oh = fast_div(i32(p.output(1)));
    a.cdiv = fast_div(a.c), a.sdiv = fast_div(a.s);
    a.pixels = i32(p.n * p.output(1) * p.output(2));
    a.cols = i32(p.filter[1] * p.filter[2] * p.c);
    tile = tile_for(a.k);
    const int gx = (a.k + tile.bm - 1) / tile.bm, gy = (a.cols + tile.bn - 1) / tile.bn;
    const int stages = (a.pixels + kBK - 1) / kBK;
    const int splits = split_count(static_cast<std::int64_t>(gx) * gy, stages);
    a.tiles_per_split = (stages + splits - 1) / splits;
    used = (stages + a.tiles_per_split - 1) / a.tiles_per_split;  // no empty split
    grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(used));
  }
  std::size_t partial_bytes() const {
    return used > 1 ? static_cast<std::size_t>(used) * a.k * a.cols * sizeof(float) : 0;
  }
  Args a{};
  Tile tile{128, 128};
  int used = 1;
  dim3 grid;
};

template <typename T, int BM, int BN, bool kSplit>
Status launch_tile(const Args& a, dim3 grid) {
  constexpr int bytes = kSmemBytes<BM, BN>;
  const Error opt_in =
      tc::allow_dynamic_shared_memory<wgmma_bwd_weights<T, BM, BN, kSplit>>(bytes);
  if (opt_in != kSuccess) return check(opt_in, "gpu:wgmma_bwd_weights shared memory opt-in");
  wgmma_bwd_weights<T, BM, BN, kSplit><<<grid, kThreads, bytes>>>(a);
  return Status::ok();
}

template <typename T, bool kSplit>
Status launch_split(const Args& a, const BwdwPlan& pl) {
  return pl.tile.bm == 64 ? launch_tile<T, 64, 256, kSplit>(a, pl.grid)
                          : launch_tile<T, 128, 128, kSplit>(a, pl.grid);
}

template <typename T>
Status launch(const Args& a, const BwdwPlan& pl) {
  if (auto st = a.partial ? launch_split<T, true>(a, pl) : launch_split<T, false>(a, pl); !st)
    return st;
  if (a.partial)
    tc::launch_reduce_splits(a.partial, static_cast<T*>(a.dw),
                             static_cast<std::int64_t>(a.k) * a.cols, pl.used);
  return check_launch("gpu:wgmma_bwd_weights launch");
}

}  // namespace

Status WgmmaBwdWeightsSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction != Direction::backward_weights)
    return not_applicable(
        "backward-weights only (forward and backward-data: gpu:wgmma_implicit_gemm)");
  if (p.dtype == DType::f32) return not_applicable("f16/bf16 only");
  if (p.spatial_dims == 3) return not_applicable("1D and 2D only (3D problem)");
  if (p.g != 1) return not_applicable("one group only");
  if (!tc::dense_channels_last(x_desc(p)) || !tc::dense_channels_last(w_desc(p)) ||
      !tc::dense_channels_last(y_desc(p)))
    return not_applicable("needs dense NHWC x and y and KRSC w (--stag=axb --wtag=axb --dtag=axb)");
  if (p.c % 8 != 0 || p.k % 8 != 0)
    return not_applicable(
        "C and K multiples of 8 only (16-byte chunks; others: gpu:tc_bwd_weights, ragged)");
  if (auto s = tc::bwd_weights_fits(p); !s) return s;
  return wg::hopper_here<wgmma_bwd_weights<cg_bf16, 128, 128, false>>();
}

Result<std::size_t> WgmmaBwdWeightsSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return BwdwPlan(p).partial_bytes();
}

Result<std::unique_ptr<Plan>> WgmmaBwdWeightsSolver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::unique_ptr<Plan>(new BwdwPlan(p));
}

Status WgmmaBwdWeightsSolver::run(const Plan& plan, const ConvTensors& t,
                                  std::span<std::byte> ws) const {
  const auto& pl = static_cast<const BwdwPlan&>(plan);
  if (ws.size() < pl.partial_bytes())
    return {StatusCode::internal_error, "gpu:wgmma_bwd_weights: workspace smaller than its splits"};
  // cp.async needs 16-byte-aligned tensors (trial, plan and transform buffers are; a library
  // caller's offset pointer may not be): refused, not faulted.
  const void* const pointers[] = {t.x.data, t.w.data, t.y.data, ws.data()};
  for (const void* ptr : pointers)
    if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      return {StatusCode::invalid_argument,
              "gpu:wgmma_bwd_weights: x, dw, dy and the workspace must be 16-byte aligned"};
  Args a = pl.a;
  a.x = t.x.data, a.dy = t.y.data, a.dw = t.w.data;
  a.partial = pl.used > 1 ? reinterpret_cast<float*>(ws.data()) : nullptr;
  switch (plan.problem.dtype) {
    case DType::bf16:
      return launch<cg_bf16>(a, pl);
    case DType::f16:
      return launch<cg_half>(a, pl);
    case DType::f32:
      break;
  }
  return {StatusCode::internal_error, "gpu:wgmma_bwd_weights: dtype"};
}

}  // namespace convguard::gpu
