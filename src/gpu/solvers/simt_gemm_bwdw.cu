// gpu:simt_gemm's backward-weights (simt_gemm.hpp): dw[k][(c, r, s)] = sum over the N*OH*OW
// pixels of dy[n][k][p] * x[n][c][ih(p, r)][iw(p, s)], on simt_tile.cuh's tile: rows K, columns
// C*R*S, reduction the pixels. Both operands run along the pixels, so each thread loads 4
// consecutive pixels of one dy row (A) and of one im2col column (B), as float4 where the pixels
// are one image's contiguous ones (dy: OH*OW % 4 == 0; x: 1x1, stride 1, no padding), and stores
// them transposed (rows padded by 4: no bank conflicts). The thread's pixel (n, oh, ow) advances by
// carries, its column (c, r, s) is decomposed once. dw's tiles are few and the reduction long, so
// the pixels are split over blockIdx.z (fp32 partials, then a sum in split order: deterministic).
#include <algorithm>
#include <cstdlib>

#include "gpu/check.hpp"
#include "gpu/solvers/simt_gemm.hpp"
#include "gpu/solvers/simt_tile.cuh"

namespace convguard::gpu::simt {
namespace {

struct WArgs {
  const float *x, *dy;
  float *dw, *partial;                     // partial: [split][K][cols], else null
  int k, cols, red, s, taps, dh, dw_;      // K, C*R*S, N*OH*OW; S, R*S, dilation
  int sh, sw, ph, pw, h, wd, oh, ow, pix;  // stride, padding, H, W, OH, OW, OH*OW
  int xs0, xs1, xs3, xs4, ys0, ys1, ys3, ys4, ws0;
  int steps_per_split;
  bool vec_a, vec_b, vec_w;
};

template <int kMT>
__global__ void __launch_bounds__(kThreads, 2) simt_bwd_weights(WArgs a) {
  constexpr int kBM = 16 * kMT;
  __shared__ __align__(16) float As[2][kBK][kBM + 4];
  __shared__ __align__(16) float Bs[2][kBK][kBN + 4];
  const int tid = threadIdx.x, m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  const int steps = (a.red + kBK - 1) / kBK;
  const int step0 = blockIdx.z * a.steps_per_split;
  const int step1 = min(steps, step0 + a.steps_per_split);
  // Row (of A) and column (of B) tid / 2; pixels (tid % 2) * 4 .. + 3 of each step.
  const int row = tid / 2, q0 = (tid % 2) * 4;
  const bool a_mine = kMT == 8 || row < kBM, a_ok = a_mine && m0 + row < a.k;
  const bool b_ok = n0 + row < a.cols;
  int cbase = 0, dr = 0, ds = 0;
  if (b_ok) {
    const int col = n0 + row, c = col / a.taps, t = col - c * a.taps, r = t / a.s;
    dr = r * a.dh, ds = (t - r * a.s) * a.dw_, cbase = c * a.xs1;
  }
  const float* dyrow = a.dy + static_cast<std::ptrdiff_t>(a_ok ? m0 + row : 0) * a.ys1;
  // The first of this thread's pixels: image pn, pixel pp = poh * OW + pow.
  const int q = step0 * kBK + q0;
  int pn = q / a.pix, pp = q - pn * a.pix, poh = pp / a.ow, pw_ = pp - poh * a.ow;

  float ra[4], rb[4];
  auto load = [&](int step) {
    const int qs = step * kBK + q0;
    const bool qv = qs < a.red;
    if (a.vec_a) {
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (a_ok && qv) v = *reinterpret_cast<const float4*>(dyrow + pn * a.ys0 + pp);
      ra[0] = v.x, ra[1] = v.y, ra[2] = v.z, ra[3] = v.w;
    }
    if (a.vec_b) {
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (b_ok && qv) v = *reinterpret_cast<const float4*>(a.x + pn * a.xs0 + cbase + pp);
      rb[0] = v.x, rb[1] = v.y, rb[2] = v.z, rb[3] = v.w;
    }
    if (!a.vec_a || !a.vec_b) {
      int n = pn, oh = poh, ow = pw_;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool v = qs + j < a.red;
        if (!a.vec_a) ra[j] = v && a_ok ? dyrow[n * a.ys0 + oh * a.ys3 + ow * a.ys4] : 0.f;
        if (!a.vec_b) {
          const int ih = oh * a.sh - a.ph + dr, iw = ow * a.sw - a.pw + ds;
          rb[j] = v && b_ok && static_cast<unsigned>(ih) < static_cast<unsigned>(a.h) &&
                          static_cast<unsigned>(iw) < static_cast<unsigned>(a.wd)
                      ? a.x[n * a.xs0 + cbase + ih * a.xs3 + iw * a.xs4]
                      : 0.f;
        }
        if (++ow == a.ow) {
          ow = 0;
          if (++oh == a.oh) oh = 0, ++n;
        }
      }
    }
    // The next step's first pixel, kBK further.
    pw_ += kBK;
    while (pw_ >= a.ow) {
      pw_ -= a.ow;
      if (++poh == a.oh) poh = 0, ++pn;
    }
    pp = poh * a.ow + pw_;
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (a_mine) As[buf][q0 + j][row] = ra[j];
      Bs[buf][q0 + j][row] = rb[j];
    }
  };

  int tx, ty;
  thread_tile(tid, tx, ty);
  float acc[kMT][8] = {};
  pipeline(step0, step1, load, store,
           [&](int buf) { tile_step<kMT>(As[buf], Bs[buf], acc, tx, ty); });

#pragma unroll
  for (int hg = 0; hg < 2; ++hg) {
    const int col = n0 + hg * 64 + tx * 4;
    if (col >= a.cols) continue;
    const bool whole = col + 3 < a.cols;
#pragma unroll
    for (int i = 0; i < kMT; ++i) {
      const int k = m0 + (i / 4) * 64 + ty * 4 + i % 4;
      if (k >= a.k) continue;
      const float* v = &acc[i][hg * 4];
      float* dst = a.partial
                       ? a.partial + (static_cast<std::ptrdiff_t>(blockIdx.z) * a.k + k) * a.cols
                       : a.dw + static_cast<std::ptrdiff_t>(k) * a.ws0;
      if (whole && (a.partial ? a.cols % 4 == 0 : a.vec_w)) {
        *reinterpret_cast<float4*>(dst + col) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < a.cols) dst[col + j] = v[j];
      }
    }
  }
}

// dw = the sum of the splits' partials, added in split order (the same bits every run).
__global__ void add_weight_splits(WArgs a, int splits) {
  const std::ptrdiff_t total = static_cast<std::ptrdiff_t>(a.k) * a.cols;
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += static_cast<std::ptrdiff_t>(gridDim.x) * blockDim.x) {
    float s = 0.f;
    for (int z = 0; z < splits; ++z) s += a.partial[z * total + i];
    a.dw[i / a.cols * a.ws0 + i % a.cols] = s;
  }
}

struct BwdwPlan : Plan {
  explicit BwdwPlan(const Problem& p) : Plan(p) {
    const Geometry G = make_geometry(p);
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    a.k = i32(G.kg), a.taps = i32(G.f[1] * G.f[2]), a.cols = i32(G.cg) * a.taps;
    a.oh = i32(G.out[1]), a.ow = i32(G.out[2]), a.pix = a.oh * a.ow, a.red = i32(G.n) * a.pix;
    a.s = i32(G.f[2]), a.dh = i32(G.dil[1]), a.dw_ = i32(G.dil[2]);
    a.sh = i32(G.stride[1]), a.sw = i32(G.stride[2]), a.ph = i32(G.pad[1]), a.pw = i32(G.pad[2]);
    a.h = i32(G.in[1]), a.wd = i32(G.in[2]);
    a.xs0 = i32(G.xs[0]), a.xs1 = i32(G.xs[1]), a.xs3 = i32(G.xs[3]), a.xs4 = i32(G.xs[4]);
    a.ys0 = i32(G.ys[0]), a.ys1 = i32(G.ys[1]), a.ys3 = i32(G.ys[3]), a.ys4 = i32(G.ys[4]);
    a.ws0 = i32(G.ws[0]);
    a.vec_a = a.pix % 4 == 0 && a.ys4 == 1 && a.ys3 == a.ow && a.ys0 % 4 == 0 && a.ys1 % 4 == 0;
    a.vec_b = a.taps == 1 && a.sh == 1 && a.sw == 1 && a.ph == 0 && a.pw == 0 && a.pix % 4 == 0 &&
              a.xs4 == 1 && a.xs3 == a.wd && a.h * a.wd == a.pix && a.xs0 % 4 == 0 &&
              a.xs1 % 4 == 0;
    a.vec_w = a.ws0 % 4 == 0 && a.cols % 4 == 0;
    g = plan_grid(a.k, a.cols, (a.red + kBK - 1) / kBK, 128);
    a.steps_per_split = g.steps_per_split;
  }
  std::size_t workspace() const { return g.partial_bytes(a.k, a.cols); }
  WArgs a{};
  Grid g;
};

}  // namespace

std::unique_ptr<Plan> bwd_weights_plan(const Problem& p) {
  return std::unique_ptr<Plan>(new BwdwPlan(p));
}

std::size_t bwd_weights_workspace(const Plan& plan) {
  return static_cast<const BwdwPlan&>(plan).workspace();
}

Status run_bwd_weights(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) {
  const auto& bp = static_cast<const BwdwPlan&>(plan);
  if (ws.size() < bp.workspace())
    return {StatusCode::internal_error, "gpu:simt_gemm: workspace smaller than its plan's"};
  WArgs a = bp.a;
  a.x = static_cast<const float*>(t.x.data);
  a.dy = static_cast<const float*>(t.y.data);
  a.dw = static_cast<float*>(t.w.data);
  a.partial = bp.g.splits > 1 ? reinterpret_cast<float*>(ws.data()) : nullptr;
  a.vec_a = a.vec_a && aligned16(a.dy);
  a.vec_b = a.vec_b && aligned16(a.x);
  a.vec_w = a.vec_w && aligned16(a.dw);
  if (bp.g.mt == 8)
    simt_bwd_weights<8><<<bp.g.grid, kThreads>>>(a);
  else
    simt_bwd_weights<4><<<bp.g.grid, kThreads>>>(a);
  if (auto st = check_launch("gpu:simt_gemm backward-weights launch"); !st) return st;
  if (bp.g.splits == 1) return Status::ok();
  const std::int64_t total = static_cast<std::int64_t>(a.k) * a.cols;
  add_weight_splits<<<pass_blocks(total), 256>>>(a, bp.g.splits);
  return check_launch("gpu:simt_gemm backward-weights split reduction");
}

}  // namespace convguard::gpu::simt
