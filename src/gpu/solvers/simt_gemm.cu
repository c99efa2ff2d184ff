// gpu:simt_gemm (simt_gemm.hpp): f32 forward implicit GEMM on CUDA cores, 128 x 128 tiles of
// 8 x 8 per thread, double-buffered shared memory, optional split-K with an in-order reduction.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "gpu/check.hpp"
#include "gpu/solvers/simt_gemm.hpp"
#include "gpu/solvers/simt_tile.cuh"

namespace convguard::gpu {

int simt::multiprocessors() {
  static std::atomic<int> cached{0};
  if (const int n = cached.load(std::memory_order_relaxed)) return n;
  int dev = 0;
  cg_device_prop prop{};
  if (CG_GPU(GetDevice)(&dev) != kSuccess || CG_GPU(GetDeviceProperties)(&prop, dev) != kSuccess) {
    (void)last_error();
    return 0;
  }
  cached.store(prop.multiProcessorCount, std::memory_order_relaxed);
  return prop.multiProcessorCount;
}

namespace {

using simt::kBK, simt::kBN, simt::kThreads;
constexpr int kMaxTaps = 256;

struct Args {
  const float* x;
  const float* w;
  float* y;
  float* partial;  // split-K: [split][K][cols], else null
  int k, cols, red, taps, s, dh, dw;
  int h, wd, ow, pix;  // input H, W; output OW; OH*OW
  int sh, sw, ph, pw;
  int xs0, xs1, xs3, xs4, ys0, ys1, ys3, ys4, ws0;
  int steps_per_split, dc, dt;  // reduction steps per split; kBK / taps, kBK % taps
  bool vec_a, vec_y;
};

// kVecB: 1x1, stride 1, no padding, OH*OW % 4 == 0, contiguous pixels: B rows as float4.
// kMT: rows per thread, 8 (128-row tiles) or 4 (64-row tiles, for K <= 64).
template <bool kVecB, int kMT>
__global__ void __launch_bounds__(kThreads, 2) simt_gemm(Args a) {
  constexpr int kBM = 16 * kMT;
  // As rows padded by 4: the transposing stores of a warp hit 32 different banks.
  __shared__ __align__(16) float As[2][kBK][kBM + 4];
  __shared__ __align__(16) float Bs[2][kBK][kBN];
  __shared__ int tap_off[kMaxTaps], tap_dr[kMaxTaps], tap_ds[kMaxTaps];
  // The gathered path's columns: offset in x of the column's (ih0, iw0), and ih0, iw0.
  __shared__ int col_base[kBN], col_ih0[kBN], col_iw0[kBN];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  if (!kVecB) {
    for (int t = tid; t < a.taps; t += kThreads) {
      const int r = t / a.s, s = t - r * a.s;
      tap_dr[t] = r * a.dh, tap_ds[t] = s * a.dw;
      tap_off[t] = tap_dr[t] * a.xs3 + tap_ds[t] * a.xs4;
    }
    if (tid < kBN) {
      constexpr int kFar = -(1 << 30);  // an invalid column's origin: every tap falls outside
      const int col = n0 + tid;
      int base = 0, ih0 = kFar, iw0 = kFar;
      if (col < a.cols) {
        const int n = col / a.pix, p = col - n * a.pix, oh = p / a.ow, ow = p - oh * a.ow;
        ih0 = oh * a.sh - a.ph, iw0 = ow * a.sw - a.pw;
        base = n * a.xs0 + ih0 * a.xs3 + iw0 * a.xs4;
      }
      col_base[tid] = base, col_ih0[tid] = ih0, col_iw0[tid] = iw0;
    }
  }
  const int steps = (a.red + kBK - 1) / kBK;
  const int step0 = blockIdx.z * a.steps_per_split;
  const int step1 = min(steps, step0 + a.steps_per_split);

  // A (w): row m0 + tid / 2, reduction positions (tid % 2) * 4 .. + 3 of each step (64-row
  // tiles: the first 128 threads).
  const int a_row = tid / 2, a_q = (tid % 2) * 4;
  const bool a_mine = kMT == 8 || a_row < kBM, a_ok = a_mine && m0 + a_row < a.k;
  const float* wrow = a.w + static_cast<std::ptrdiff_t>(a_ok ? m0 + a_row : 0) * a.ws0;
  // B (x): reduction row `warp` of each step; columns 4 * lane .. + 3 (kVecB: their offset in
  // x, -1 past the end) or lane + 32 j (the column table).
  int vbase = -1;
  if (kVecB) {
    const int col = n0 + 4 * lane;
    const int n = col / a.pix;
    if (col < a.cols) vbase = n * a.xs0 + (col - n * a.pix);
  }
  // This thread's reduction row as (c, tap), advanced by carries.
  int rb = step0 * kBK + warp;
  int c = rb / a.taps, t = rb - c * a.taps;
  __syncthreads();  // the tap table

  float ra[4], rb4[4];
  auto load = [&](int step) {
    const int q = step * kBK + a_q;
    if (a.vec_a) {
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (a_ok && q < a.red) v = *reinterpret_cast<const float4*>(wrow + q);
      ra[0] = v.x, ra[1] = v.y, ra[2] = v.z, ra[3] = v.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) ra[j] = a_ok && q + j < a.red ? wrow[q + j] : 0.f;
    }
    const bool rv = step * kBK + warp < a.red;
    if (kVecB) {
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (rv && vbase >= 0)
        v = *reinterpret_cast<const float4*>(a.x + vbase + static_cast<std::ptrdiff_t>(c) * a.xs1);
      rb4[0] = v.x, rb4[1] = v.y, rb4[2] = v.z, rb4[3] = v.w;
      c += kBK;
    } else {
      const int dr = rv ? tap_dr[t] : 0, ds = rv ? tap_ds[t] : 0;
      const std::ptrdiff_t off = rv ? static_cast<std::ptrdiff_t>(c) * a.xs1 + tap_off[t] : 0;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int ih = col_ih0[lane + 32 * j] + dr, iw = col_iw0[lane + 32 * j] + ds;
        rb4[j] = rv && static_cast<unsigned>(ih) < static_cast<unsigned>(a.h) &&
                         static_cast<unsigned>(iw) < static_cast<unsigned>(a.wd)
                     ? a.x[col_base[lane + 32 * j] + off]
                     : 0.f;
      }
      t += a.dt, c += a.dc;
      if (t >= a.taps) t -= a.taps, ++c;
    }
  };
  auto store = [&](int buf) {
    if (a_mine)
#pragma unroll
      for (int j = 0; j < 4; ++j) As[buf][a_q + j][a_row] = ra[j];
    if (kVecB) {
      *reinterpret_cast<float4*>(&Bs[buf][warp][4 * lane]) =
          make_float4(rb4[0], rb4[1], rb4[2], rb4[3]);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) Bs[buf][warp][lane + 32 * j] = rb4[j];
    }
  };

  // Outputs: simt_tile.cuh's layout (rows ty*4 + i and 64 + ty*4 + i, columns tx*4 + j and 64 +
  // tx*4 + j).
  int tx, ty;
  simt::thread_tile(tid, tx, ty);
  float acc[kMT][8] = {};
  simt::pipeline(step0, step1, load, store,
                 [&](int buf) { simt::tile_step<kMT>(As[buf], Bs[buf], acc, tx, ty); });

  // Epilogue: per 4-column group, float4 where the 4 columns are one image's contiguous pixels.
#pragma unroll
  for (int hg = 0; hg < 2; ++hg) {
    const int col = n0 + hg * 64 + tx * 4;
    if (col >= a.cols) continue;
    int yoff[4];  // each column's offset in y (output channel 0), -1 past the end
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int cj = col + j;
      if (cj < a.cols) {
        const int n = cj / a.pix, p = cj - n * a.pix, oh = p / a.ow, ow = p - oh * a.ow;
        yoff[j] = n * a.ys0 + oh * a.ys3 + ow * a.ys4;
      } else {
        yoff[j] = -1;
      }
    }
    const bool whole = col + 3 < a.cols;
#pragma unroll
    for (int i = 0; i < kMT; ++i) {
      const int row = m0 + (i / 4) * 64 + ty * 4 + i % 4;
      if (row >= a.k) continue;
      const float* v = &acc[i][hg * 4];
      if (a.partial) {
        float* dst =
            a.partial + (static_cast<std::ptrdiff_t>(blockIdx.z) * a.k + row) * a.cols + col;
        if (whole && a.cols % 4 == 0) {
          *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (yoff[j] >= 0) dst[j] = v[j];
        }
      } else if (whole && a.vec_y) {
        *reinterpret_cast<float4*>(a.y + yoff[0] + static_cast<std::ptrdiff_t>(row) * a.ys1) =
            make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (yoff[j] >= 0) a.y[yoff[j] + static_cast<std::ptrdiff_t>(row) * a.ys1] = v[j];
      }
    }
  }
}

// y = the sum of the splits' partials, added in split order (the same bits every run).
__global__ void add_splits(Args a, int splits) {
  const std::ptrdiff_t total = static_cast<std::ptrdiff_t>(a.k) * a.cols;
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += static_cast<std::ptrdiff_t>(gridDim.x) * blockDim.x) {
    float s = 0.f;
    for (int z = 0; z < splits; ++z) s += a.partial[z * total + i];
    const int row = static_cast<int>(i / a.cols), col = static_cast<int>(i - i / a.cols * a.cols);
    const int n = col / a.pix, p = col - n * a.pix, oh = p / a.ow, ow = p - oh * a.ow;
    a.y[static_cast<std::ptrdiff_t>(n) * a.ys0 + static_cast<std::ptrdiff_t>(row) * a.ys1 +
        oh * a.ys3 + ow * a.ys4] = s;
  }
}

// The largest element offset of a tensor (sizes and strides in the Geometry's order), or -1 when a
// stride is negative.
std::int64_t span_of(const std::int64_t* size, const std::int64_t* stride) {
  std::int64_t s = 0;
  for (int i = 0; i < 5; ++i) {
    if (stride[i] < 0) return -1;
    s += (size[i] - 1) * stride[i];
  }
  return s;
}

// The forward GEMM the kernel computes. Backward-data (stride 1) is the forward convolution of dy
// (K channels, OH x OW) with the filter flipped in R and S and K and C swapped, w'[c][k][r][s] =
// w[k][c][R-1-r][S-1-s] (written to the workspace each run, dense), padded dil*(R-1) - pad_begin
// at the beginning (negative: dy rows skipped), its output dx (C channels, H x W).
Geometry forward_view(const Problem& p) {
  const Geometry O = make_geometry(p);
  if (p.direction != Direction::backward_data) return O;
  Geometry G = O;
  G.cg = O.kg, G.kg = O.cg;
  for (int i = 0; i < 3; ++i) {
    G.in[i] = O.out[i], G.out[i] = O.in[i];
    G.pad[i] = O.dil[i] * (O.f[i] - 1) - O.pad[i];
  }
  for (int i = 0; i < 5; ++i) G.xs[i] = O.ys[i], G.ys[i] = O.xs[i];
  G.ws[4] = 1, G.ws[3] = O.f[2], G.ws[2] = 0, G.ws[1] = O.f[1] * O.f[2], G.ws[0] = O.kg * G.ws[1];
  return G;
}

// Backward-data's w' (forward_view) from w, any strides.
__global__ void flip_filter(Geometry O, const float* __restrict__ w, float* __restrict__ wf) {
  const std::int64_t rs = O.f[1] * O.f[2], total = O.cg * O.kg * rs;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t t = i % rs, k = i / rs % O.kg, c = i / rs / O.kg;
    const std::int64_t r = O.f[1] - 1 - t / O.f[2], q = O.f[2] - 1 - t % O.f[2];
    wf[i] = w[k * O.ws[0] + c * O.ws[1] + r * O.ws[3] + q * O.ws[4]];
  }
}

struct SimtPlan : Plan {
  explicit SimtPlan(const Problem& p) : Plan(p), O(make_geometry(p)) {
    const Geometry G = forward_view(p);
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    a.k = i32(G.kg), a.pix = i32(G.out[1] * G.out[2]), a.cols = i32(G.n) * a.pix;
    a.taps = i32(G.f[1] * G.f[2]), a.red = i32(G.cg) * a.taps, a.s = i32(G.f[2]);
    a.dh = i32(G.dil[1]), a.dw = i32(G.dil[2]);
    a.h = i32(G.in[1]), a.wd = i32(G.in[2]), a.ow = i32(G.out[2]);
    a.sh = i32(G.stride[1]), a.sw = i32(G.stride[2]), a.ph = i32(G.pad[1]), a.pw = i32(G.pad[2]);
    a.xs0 = i32(G.xs[0]), a.xs1 = i32(G.xs[1]), a.xs3 = i32(G.xs[3]), a.xs4 = i32(G.xs[4]);
    a.ys0 = i32(G.ys[0]), a.ys1 = i32(G.ys[1]), a.ys3 = i32(G.ys[3]), a.ys4 = i32(G.ys[4]);
    a.ws0 = i32(G.ws[0]);
    a.dc = kBK / a.taps, a.dt = kBK % a.taps;
    a.vec_a = a.red % 4 == 0 && a.ws0 % 4 == 0;
    a.vec_y = a.pix % 4 == 0 && a.ys4 == 1 && a.ys3 == a.ow && a.ys0 % 4 == 0 && a.ys1 % 4 == 0;
    vec_b = a.taps == 1 && a.sh == 1 && a.sw == 1 && a.ph == 0 && a.pw == 0 && a.pix % 4 == 0 &&
            a.xs4 == 1 && a.xs3 == a.wd && a.h * a.wd == a.pix && a.xs0 % 4 == 0 && a.xs1 % 4 == 0;
    g = simt::plan_grid(a.k, a.cols, (a.red + kBK - 1) / kBK, 16);
    a.steps_per_split = g.steps_per_split;
  }
  // Backward-data's flipped filter (rounded to 256 bytes), then split-K's partials.
  std::size_t filter_bytes() const {
    if (problem.direction != Direction::backward_data) return 0;
    return (static_cast<std::size_t>(O.cg) * O.kg * O.taps() * sizeof(float) + 255) / 256 * 256;
  }
  std::size_t workspace() const { return filter_bytes() + g.partial_bytes(a.k, a.cols); }
  Geometry O;  // the problem's own geometry (backward-data's filter flip reads w through it)
  Args a{};
  bool vec_b = false;
  simt::Grid g;
};

}  // namespace

Status SimtGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction == Direction::backward_data && (p.stride[1] != 1 || p.stride[2] != 1))
    return not_applicable("backward-data with stride > 1 (its forward view needs stride 1)");
  if (p.dtype != DType::f32) return not_applicable("f32 only (exact fp32 FMAs)");
  if (p.spatial_dims == 3) return not_applicable("2D only (no 3D)");
  if (p.g != 1) return not_applicable("one group only");
  const Geometry G = forward_view(p);  // backward-data: its filter is flipped into a dense copy
  if (G.ws[1] != G.f[1] * G.f[2] || G.ws[3] != G.f[2] || G.ws[4] != 1)
    return not_applicable(
        "forward, backward-weights: the filter must be dense along (c, r, s) (KCRS)");
  if (G.taps() > kMaxTaps) return not_applicable("more than 256 filter taps");
  const std::int64_t xsz[5] = {G.n, G.cg, G.in[0], G.in[1], G.in[2]};
  const std::int64_t ysz[5] = {G.n, G.kg, G.out[0], G.out[1], G.out[2]};
  const std::int64_t wsz[5] = {G.kg, G.cg, G.f[0], G.f[1], G.f[2]};
  constexpr std::int64_t kIntMax = 0x3fffffff;  // offsets plus padding stay inside int
  const std::int64_t xs = span_of(xsz, G.xs), ys = span_of(ysz, G.ys), ws = span_of(wsz, G.ws);
  if (xs < 0 || ys < 0 || ws < 0) return not_applicable("negative tensor strides");
  if (xs > kIntMax || ys > kIntMax || ws > kIntMax || G.n * G.out[1] * G.out[2] > kIntMax ||
      G.cg * G.taps() > kIntMax || G.in[1] + G.pad[1] > kIntMax || G.in[2] + G.pad[2] > kIntMax ||
      G.out[1] * G.stride[1] > kIntMax || G.out[2] * G.stride[2] > kIntMax ||
      G.f[1] * G.dil[1] > kIntMax || G.f[2] * G.dil[2] > kIntMax)
    return not_applicable("sizes or offsets beyond 32-bit int arguments");
  if ((G.kg + 63) / 64 > 65535) return not_applicable("more than 65535 row tiles for one launch");
  return Status::ok();
}

Result<std::size_t> SimtGemmSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  if (p.direction == Direction::backward_weights)
    return simt::bwd_weights_workspace(*simt::bwd_weights_plan(p));
  return SimtPlan(p).workspace();
}

Result<std::unique_ptr<Plan>> SimtGemmSolver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  if (p.direction == Direction::backward_weights) return simt::bwd_weights_plan(p);
  return std::unique_ptr<Plan>(new SimtPlan(p));
}

Status SimtGemmSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const {
  if (plan.problem.direction == Direction::backward_weights)
    return simt::run_bwd_weights(plan, t, ws);
  const auto& sp = static_cast<const SimtPlan&>(plan);
  if (ws.size() < sp.workspace())
    return {StatusCode::internal_error, "gpu:simt_gemm: workspace smaller than its plan's"};
  Args a = sp.a;
  const bool backward = plan.problem.direction == Direction::backward_data;
  a.x = static_cast<const float*>(backward ? t.y.data : t.x.data);  // backward: dy
  a.y = static_cast<float*>(backward ? t.x.data : t.y.data);        // backward: dx
  a.w = static_cast<const float*>(t.w.data);
  if (backward) {
    float* wf = reinterpret_cast<float*>(ws.data());
    const std::int64_t total = sp.O.cg * sp.O.kg * sp.O.taps();
    flip_filter<<<static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 1024)), 256>>>(
        sp.O, a.w, wf);
    if (auto st = check_launch("gpu:simt_gemm filter flip"); !st) return st;
    a.w = wf;
  }
  a.partial = sp.g.splits > 1 ? reinterpret_cast<float*>(ws.data() + sp.filter_bytes()) : nullptr;
  // The float4 paths also need 16-byte aligned tensors.
  a.vec_a = a.vec_a && simt::aligned16(a.w);
  a.vec_y = a.vec_y && simt::aligned16(a.y);
  const bool vb = sp.vec_b && simt::aligned16(a.x);
  if (sp.g.mt == 8)
    vb ? simt_gemm<true, 8><<<sp.g.grid, kThreads>>>(a)
       : simt_gemm<false, 8><<<sp.g.grid, kThreads>>>(a);
  else
    vb ? simt_gemm<true, 4><<<sp.g.grid, kThreads>>>(a)
       : simt_gemm<false, 4><<<sp.g.grid, kThreads>>>(a);
  if (auto st = check_launch("gpu:simt_gemm launch"); !st) return st;
  if (sp.g.splits == 1) return Status::ok();
  const std::int64_t total = static_cast<std::int64_t>(a.k) * a.cols;
  add_splits<<<simt::pass_blocks(total), 256>>>(a, sp.g.splits);
  return check_launch("gpu:simt_gemm split reduction");
}

}  // namespace convguard::gpu
