#include <algorithm>
#include <cstdint>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/tc_bwd_weights.hpp"
#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"

namespace convguard::gpu {
namespace {

using namespace tc;

// A block computes 128 output channels (k) x 128 columns (r, s, c) of dw. A stage holds
// Tile<T>::kRows pixels of both operands, each pixel a row of kRowChunks 16-byte chunks (128
// values): dy's rows (A) first, then im2col(x)'s (B). The stage is 16 KiB in every type: 32 pixels
// of 16-bit values (two m16n8k16 steps) or 16 of f32 (two TF32 m16n8k8 steps).
constexpr int kTile = 128, kStages = 4;
constexpr int kThreads = 128, kWarpTile = 64, kMI = kWarpTile / 16, kNI = kWarpTile / 8;
template <typename T>
struct Tile {
  static constexpr bool kTf32 = sizeof(T) == 4;
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // values in a chunk
  static constexpr int kRows = kTf32 ? 16 : 32, kRowChunks = kTile / kVec;
  static constexpr int kStep = kTf32 ? 8 : 16;                  // reduction of one mma
  static constexpr int kLoads = kRows * kRowChunks / kThreads;  // chunks per thread, operand, stage
  static constexpr int kRowStep = kThreads / kRowChunks;        // rows between one thread's chunks
  static constexpr int kOperandChunks = kRows * kRowChunks, kStageChunks = 2 * kOperandChunks;
  static_assert(kThreads % kRowChunks == 0 && kLoads * kRowStep == kRows, "whole rows per pass");
  // Chunk j of row i is stored at j ^ (i % 8) (16-bit: the 8 rows one ldmatrix reads fall in 8
  // different bank groups), or at j ^ 2 (i % 8) (TF32: a fragment's 32-bit loads read rows t and
  // t + 4, t < 4, at 8 consecutive values, two chunks a row: the 8 rows' chunk pairs then cover
  // the 32 banks once). Either way a quarter warp's 8 stored chunks of one row stay in 8 bank
  // groups.
  static __device__ __forceinline__ int swizzle(int row, int chunk) {
    return row * kRowChunks + (chunk ^ ((row & 7) << (kTf32 ? 1 : 0)));
  }
};
constexpr int kSmemBytes = kStages * Tile<float>::kStageChunks * 16;  // 64 KiB: opt-in above 48
static_assert(Tile<float>::kStageChunks == Tile<cg_bf16>::kStageChunks);

struct Args {
  const void* x;
  const void* dy;
  void* dw;
  int h, w_, c, k, s, oh, ow, sh, sw, ph, pw, dh, dw_;
  int pixels;           // N*OH*OW: the reduction
  int cols;             // R*S*C: dw's columns
  int cp, colsp;        // c padded to a whole chunk, and the GEMM's columns R*S*cp (ragged)
  int tiles_per_split;  // stages of Tile::kRows pixels each blockIdx.z reduces
  float* partial;       // splits' fp32 partial sums [split][k][cols]; null: write dw directly
  Depth depth;          // a 3D problem's (the k3D kernel; last, so the 2D kernels' offsets stay)
};

// kRagged: C or K is not a multiple of a chunk (8 16-bit or 4 f32 values), so a 16-byte run of
// channels may start anywhere and cross a tap. The GEMM's columns are then (r, s, c) with c padded
// to cp (zeros), both operands are loaded element by element (load_ragged) into registers while the
// previous stage is computed and stored to shared memory after it, and the epilogue maps the padded
// columns back to dw's, element by element. The aligned path (cp.async, 16 bytes, paired stores) is
// unchanged. k3D: a 3D problem (a.depth): pixels over (n, od, oh, ow), columns over (t, r, s, c),
// the tap row index rs / S counting (t, r) as in the implicit GEMMs (tc::Depth); the 2D lines stay
// as they were. T = float: TF32 (operands rounded to TF32 in the fragments, m16n8k8).
template <typename T, bool kRagged, bool k3D = false>
__global__ void __launch_bounds__(kThreads) tc_bwd_weights(Args a) {
  using G = Tile<T>;
  constexpr int kRows = G::kRows, kRowChunks = G::kRowChunks, kLoads = G::kLoads;
  constexpr int kRowStep = G::kRowStep, kOperandChunks = G::kOperandChunks;
  constexpr int kStageChunks = G::kStageChunks;
  extern __shared__ uint4 smem_raw[];
  auto smem = reinterpret_cast<uint4(*)[kStageChunks]>(smem_raw);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / 2, warp_n = warp % 2;
  const int m0 = blockIdx.x * kTile, n0 = blockIdx.y * kTile;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);

  // Each thread loads one fixed chunk column of both operands, rows row0 + i * kRowStep: dy's
  // channels kc.. and x's column (r, s, c..), a chunk (G::kVec values) of each, decomposed once.
  const int chunk = tid % kRowChunks, row0 = tid / kRowChunks;
  const int kc = m0 + chunk * G::kVec, col = n0 + chunk * G::kVec;
  const bool k_ok = kc < a.k, col_ok = col < a.colsp;
  const int cc = col_ok ? col : 0, c = cc % a.cp, rs = cc / a.cp;
  const int k_n = a.k - kc, c_n = a.c - c;  // ragged: valid elements of the chunks
  const int r_off = (rs / a.s) * a.dh - a.ph, s_off = (rs % a.s) * a.dw_ - a.pw;
  int t_off = 0, r_off_3d = 0;  // 3D: the depth and row taps' offsets of tap row rs / S
  if constexpr (k3D) {
    split_tap_row(rs / a.s, a.depth.taps_r, a.depth.dd, a.dh, t_off, r_off_3d);
    t_off -= a.depth.pd, r_off_3d -= a.ph;
  }
  const int tiles_all = (a.pixels + kRows - 1) / kRows;
  const int kt0 = blockIdx.z * a.tiles_per_split;
  const int tiles = min(tiles_all - kt0, a.tiles_per_split);  // this split's stages
  int p_next = kt0 * kRows;                                   // first pixel of the next load
  uint4 ra[kRagged ? kLoads : 1], rb[kRagged ? kLoads : 1];   // ragged: the fetched chunks
  auto load = [&](int stage) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int row = row0 + i * kRowStep, p = p_next + row;
      const bool p_ok = p < a.pixels;
      const int pp = p_ok ? p : 0;
      const int ow = pp % a.ow, t = pp / a.ow, oh = t % a.oh, n = t / a.oh;
      const bool av = p_ok && k_ok;
      const T* a_src = dy + static_cast<std::int64_t>(pp) * a.k + kc;
      const int ih = oh * a.sh + (k3D ? r_off_3d : r_off), iw = ow * a.sw + s_off;
      int id = 0, img = n;  // 3D: n counts (image, od)
      if constexpr (k3D) {
        split_image(n, a.depth.od, img, id);
        id = id * a.depth.sd + t_off;
      }
      const bool bv = p_ok && col_ok && (!k3D || (id >= 0 && id < a.depth.d)) && ih >= 0 &&
                      ih < a.h && iw >= 0 && iw < a.w_;
      const T* b_src =
          x +
          (((static_cast<std::int64_t>(img) * (k3D ? a.depth.d : 1) + id) * a.h + ih) * a.w_ + iw) *
              a.c +
          c;
      if constexpr (kRagged) {
        ra[i] = load_ragged(a_src, av ? k_n : 0);
        rb[i] = load_ragged(b_src, bv ? c_n : 0);
      } else {
        cp_async16(&smem[stage][G::swizzle(row, chunk)], av ? a_src : dy, av);
        cp_async16(&smem[stage][kOperandChunks + G::swizzle(row, chunk)], bv ? b_src : x, bv);
      }
    }
    p_next += kRows;
  };
  auto store = [&](int stage) {  // ragged: the fetched chunks to their stage
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int row = row0 + i * kRowStep;
      smem[stage][G::swizzle(row, chunk)] = ra[i];
      smem[stage][kOperandChunks + G::swizzle(row, chunk)] = rb[i];
    }
  };

  float acc[kMI][kNI][4] = {};
  // kStages-deep pipeline as in the forward kernel: one barrier per stage.
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < tiles) {
      load(st);
      if constexpr (kRagged) store(st);
    }
    if constexpr (!kRagged) cp_async_commit();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    const bool more = kt + kStages - 1 < tiles;
    if constexpr (!kRagged) cp_async_wait<kStages - 2>();
    __syncthreads();
    if (more) load((kt + kStages - 1) % kStages);  // ragged: into registers
    if constexpr (!kRagged) cp_async_commit();
    const uint4* A = smem[kt % kStages];
    const uint4* B = A + kOperandChunks;
#pragma unroll
    for (int ks = 0; ks < kRows / G::kStep; ++ks) {
      std::uint32_t af[kMI][4], bf[kNI / 2][4];
      if constexpr (G::kTf32) {
        // 32-bit values: each thread reads its fragment elements one by one (ldmatrix moves 16-bit
        // elements only). m16n8k8's A[m][p]: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4);
        // B[p][n]: (t, g), (t + 4, g), with g = lane / 4, t = lane % 4, stored at row p, value m or
        // n.
        const auto* As = reinterpret_cast<const std::uint32_t*>(A);
        const auto* Bs = reinterpret_cast<const std::uint32_t*>(B);
        const int g = lane / 4, t = lane % 4, p0 = ks * 8 + t;
        auto at = [](const std::uint32_t* op, int p, int v) {
          return op[G::swizzle(p, v / G::kVec) * G::kVec + v % G::kVec];
        };
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi) {
          const int m = warp_m * kWarpTile + mi * 16 + g;
          af[mi][0] = at(As, p0, m), af[mi][1] = at(As, p0, m + 8);
          af[mi][2] = at(As, p0 + 4, m), af[mi][3] = at(As, p0 + 4, m + 8);
          round_operands<T>(af[mi]);
        }
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) {
          const int n = warp_n * kWarpTile + ni * 8 + g;
          bf[ni / 2][(ni % 2) * 2] = at(Bs, p0, n);
          bf[ni / 2][(ni % 2) * 2 + 1] = at(Bs, p0 + 4, n);
        }
#pragma unroll
        for (int nj = 0; nj < kNI / 2; ++nj) round_operands<T>(bf[nj]);
      } else {
        // Stored rows are pixels (the reduction): ldmatrix.trans hands out A[m][p] for the four
        // 8x8 tiles (m 0-7 | 8-15) x (p 0-7 | 8-15), and B[p][n] as two n-tiles' (p 0-7, 8-15).
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi) {
          const int row = ks * 16 + lane % 8 + (lane / 16) * 8;
          const int m = warp_m * kWarpTile + mi * 16 + ((lane / 8) % 2) * 8;
          ldmatrix_x4_trans(af[mi], &A[G::swizzle(row, m / 8)]);
        }
#pragma unroll
        for (int nj = 0; nj < kNI / 2; ++nj) {
          const int row = ks * 16 + lane % 8 + ((lane / 8) % 2) * 8;
          const int n = warp_n * kWarpTile + nj * 16 + (lane / 16) * 8;
          ldmatrix_x4_trans(bf[nj], &B[G::swizzle(row, n / 8)]);
        }
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
  // Epilogue: two adjacent columns per register pair, to KRSC dw or this split's partial sums;
  // ragged: padded column (tap, c) to dw's tap * C + c, element by element, padding dropped.
  T* dw = static_cast<T*>(a.dw);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni) {
      int cx = n0 + warp_n * kWarpTile + ni * 8 + (lane % 4) * 2;
      if (cx >= a.colsp) continue;
      int c_left = 2;  // of the pair, in dw's row
      if constexpr (kRagged) {
        const int ch = cx % a.cp;
        c_left = a.c - ch;
        if (c_left <= 0) continue;
        cx = (cx / a.cp) * a.c + ch;
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_m * kWarpTile + mi * 16 + lane / 4 + half * 8;
        if (row >= a.k) continue;
        const std::int64_t plane = static_cast<std::int64_t>(a.k) * a.cols,
                           off = static_cast<std::int64_t>(row) * a.cols + cx;
        const float v0 = acc[mi][ni][half * 2], v1 = acc[mi][ni][half * 2 + 1];
        if constexpr (kRagged)
          store_result_ragged(dw, a.partial, plane, off, v0, v1, c_left > 1, false);
        else
          store_result(dw, a.partial, plane, off, v0, v1);
      }
    }
}

// Splits of the reduction: dw is small (a few output tiles) and the reduction long, so about
// two blocks per SM (64 KiB of shared memory each: three fit), each split at least 4 stages.
int split_count(std::int64_t out_tiles, std::int64_t stages) {
  const int sms = sm_count();
  if (sms == 0) return 1;
  const std::int64_t want = (2 * sms + out_tiles - 1) / out_tiles;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>({want, stages / 4, 256})));
}

// Launch arguments and split computed once.
struct BwdwPlan : Plan {
  explicit BwdwPlan(const Problem& p) : Plan(p) {
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    a.h = i32(p.input[1]), a.w_ = i32(p.input[2]), a.c = i32(p.c), a.k = i32(p.k);
    a.s = i32(p.filter[2]);
    a.oh = i32(p.output(1)), a.ow = i32(p.output(2));
    a.sh = i32(p.stride[1]), a.sw = i32(p.stride[2]);
    a.ph = i32(p.pad_begin[1]), a.pw = i32(p.pad_begin[2]);
    a.dh = i32(p.dilation[1]), a.dw_ = i32(p.dilation[2]);
    three_d = p.spatial_dims == 3;
    if (three_d) a.depth = depth_of(p);
    const int od = three_d ? a.depth.od : 1, tap_rows = i32(p.filter[0] * p.filter[1]);
    a.pixels = i32(p.n) * od * a.oh * a.ow;
    a.cols = tap_rows * a.s * a.c;
    // The kernel's Tile: values in a 16-byte chunk, pixels a stage.
    const bool f32 = p.dtype == DType::f32;
    const int vec = f32 ? Tile<float>::kVec : Tile<cg_bf16>::kVec;
    const int rows = f32 ? Tile<float>::kRows : Tile<cg_bf16>::kRows;
    ragged = a.c % vec != 0 || a.k % vec != 0;
    a.cp = ragged ? (a.c + vec - 1) / vec * vec : a.c;
    a.colsp = tap_rows * a.s * a.cp;
    const int gx = (a.k + kTile - 1) / kTile, gy = (a.colsp + kTile - 1) / kTile;
    const int stages = (a.pixels + rows - 1) / rows;
    const int splits = split_count(static_cast<std::int64_t>(gx) * gy, stages);
    a.tiles_per_split = (stages + splits - 1) / splits;
    used = (stages + a.tiles_per_split - 1) / a.tiles_per_split;  // no empty split
    grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(used));
  }
  std::size_t partial_bytes() const {
    return used > 1 ? static_cast<std::size_t>(used) * a.k * a.cols * sizeof(float) : 0;
  }
  Args a{};
  bool ragged = false, three_d = false;
  int used = 1;
  dim3 grid;
};

template <typename T, bool kRagged, bool k3D>
Status launch_tiles(const Args& a, const BwdwPlan& plan) {
  constexpr auto kernel = tc_bwd_weights<T, kRagged, k3D>;
  const Error opt_in = allow_dynamic_shared_memory<kernel>(kSmemBytes);
  if (opt_in != kSuccess) return check(opt_in, "gpu:tc_bwd_weights shared memory opt-in");
  kernel<<<plan.grid, kThreads, kSmemBytes>>>(a);
  return Status::ok();
}

template <typename T>
Status launch(Args a, const BwdwPlan& plan) {
  const Status st = plan.three_d  ? (plan.ragged ? launch_tiles<T, true, true>(a, plan)
                                                 : launch_tiles<T, false, true>(a, plan))
                    : plan.ragged ? launch_tiles<T, true, false>(a, plan)
                                  : launch_tiles<T, false, false>(a, plan);
  if (!st) return st;
  if (a.partial)
    launch_reduce_splits(a.partial, static_cast<T*>(a.dw), static_cast<std::int64_t>(a.k) * a.cols,
                         plan.used);
  return check_launch("gpu:tc_bwd_weights launch");
}

}  // namespace

std::string_view TcBwdWeightsSolver::id() const {
  return tf32_ ? "gpu:tc_bwd_weights:tf32" : "gpu:tc_bwd_weights";
}

Accuracy TcBwdWeightsSolver::accuracy(const Problem& p) const {
  Accuracy a = GpuSolver::accuracy(p);
  if (tf32_) a.operand_roundoff = kTf32Roundoff;
  return a;
}

Status TcBwdWeightsSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction != Direction::backward_weights)
    return not_applicable(
        "backward-weights only (forward and backward-data: gpu:tc_implicit_gemm)");
  if (tf32_ && p.dtype != DType::f32)
    return not_applicable("the TF32 variant is for f32 problems (f16/bf16: gpu:tc_bwd_weights)");
  if (!tf32_ && p.dtype == DType::f32)
    return not_applicable(
        "f16/bf16 only (f32 on tensor cores computes in TF32: gpu:tc_bwd_weights:tf32)");
  if (auto s = dense_one_group(p); !s) return s;
  if (auto s = bwd_weights_fits(p); !s) return s;
  return Status::ok();
}

Result<std::size_t> TcBwdWeightsSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return BwdwPlan(p).partial_bytes();
}

Result<std::unique_ptr<Plan>> TcBwdWeightsSolver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::unique_ptr<Plan>(new BwdwPlan(p));
}

Status TcBwdWeightsSolver::run(const Plan& plan, const ConvTensors& t,
                               std::span<std::byte> ws) const {
  const auto& bp = static_cast<const BwdwPlan&>(plan);
  if (ws.size() < bp.partial_bytes())
    return {StatusCode::internal_error, "gpu:tc_bwd_weights: workspace smaller than its splits"};
  auto a = bp.a;
  a.x = t.x.data, a.dy = t.y.data, a.dw = t.w.data;
  a.partial = bp.used > 1 ? reinterpret_cast<float*>(ws.data()) : nullptr;
  switch (plan.problem.dtype) {
    case DType::bf16:
      return launch<cg_bf16>(a, bp);
    case DType::f16:
      return launch<cg_half>(a, bp);
    case DType::f32:
      return launch<float>(a, bp);
  }
  return {StatusCode::internal_error, "gpu:tc_bwd_weights: dtype"};
}

}  // namespace convguard::gpu
