#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/direct.hpp"
#include "gpu/solvers/roles.hpp"

namespace convguard::gpu {
namespace {

constexpr int kTH = 8, kTW = 32, kOut = 8, kThreads = kTH * kTW;  // forward / backward-data tile
constexpr int kWK = 8, kWC = 8, kWP = 32, kWItems = 4;  // backward-weights: k x c x 32 pixels
constexpr int kSmemFloats = 48 * 1024 / 4;
constexpr std::int64_t kBusyBlocks = 264;  // two per SM on an H100: below this, split

CG_HOST_DEVICE inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
CG_HOST_DEVICE inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return -floor_div(-a, b);
}

// Forward and backward-data as one tiled kernel: the output ("dst": y or dx) is computed from a
// source ("src": x or dy) and w, with the roles of w's first two dimensions swapped.
struct Tiled : Roles {
  std::int64_t f[3], s[3], d[3], p[3];
  int red_step, ph, pw;  // reduction channels per step, source patch extent
  std::int64_t tiles_h, tiles_w, out_chunks;
  CG_HOST_DEVICE std::int64_t items() const {
    return n * out[0] * tiles_h * tiles_w * out_chunks * g;
  }
  // First source row (col) under the tile starting at output row (col) t0 of dimension i.
  CG_HOST_DEVICE std::int64_t origin(int i, std::int64_t t0) const {
    return backward ? ceil_div(t0 + p[i] - (f[i] - 1) * d[i], s[i]) : t0 * s[i] - p[i];
  }
  // Patch row (col) of dimension i read by output t0 + local through tap f: forward always
  // reads one; backward-data -1 where the tap misses the stride grid.
  CG_HOST_DEVICE std::int64_t patch_index(int i, std::int64_t t0, int local, std::int64_t origin,
                                          int f) const {
    if (!backward) return local * s[i] + f * d[i];
    const std::int64_t off = t0 + local + p[i] - f * d[i] - origin * s[i];
    return off < 0 || off % s[i] ? -1 : off / s[i];
  }
  std::size_t smem_bytes() const {
    return sizeof(float) * (static_cast<std::size_t>(red_step) * ph * pw +
                            static_cast<std::size_t>(kOut) * red_step * f[1] * f[2]);
  }
};

Tiled make_tiled(const Problem& pr) {
  const Geometry G = make_geometry(pr);
  Tiled t{};
  static_cast<Roles&>(t) = make_roles(G, pr.direction == Direction::backward_data);
  for (int i = 0; i < 3; ++i)
    t.f[i] = G.f[i], t.s[i] = G.stride[i], t.d[i] = G.dil[i], t.p[i] = G.pad[i];
  auto extent = [&](int i, int tile) {
    return t.backward ? (tile - 1 + (t.f[i] - 1) * t.d[i]) / t.s[i] + 1
                      : (tile - 1) * t.s[i] + (t.f[i] - 1) * t.d[i] + 1;
  };
  const std::int64_t ph = extent(1, kTH), pw = extent(2, kTW);
  const std::int64_t per_channel = ph * pw + kOut * t.f[1] * t.f[2];
  t.red_step = static_cast<int>(std::min<std::int64_t>({8, t.red_ch, kSmemFloats / per_channel}));
  t.ph = static_cast<int>(std::min<std::int64_t>(ph, kSmemFloats));
  t.pw = static_cast<int>(std::min<std::int64_t>(pw, kSmemFloats));
  t.tiles_h = (t.out[1] + kTH - 1) / kTH, t.tiles_w = (t.out[2] + kTW - 1) / kTW;
  t.out_chunks = (t.out_ch + kOut - 1) / kOut;
  return t;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    tiled(Tiled D, const T* __restrict__ src, const T* __restrict__ w, T* dst) {
  extern __shared__ float smem[];
  float* patch = smem;
  float* wsm = smem + D.red_step * D.ph * D.pw;
  const int tid = threadIdx.x, tx = tid % kTW, ty = tid / kTW;
  const int taps = static_cast<int>(D.f[1] * D.f[2]);
  const std::int64_t items = D.items();
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    std::int64_t r = item;
    const std::int64_t w0 = (r % D.tiles_w) * kTW;
    r /= D.tiles_w;
    const std::int64_t h0 = (r % D.tiles_h) * kTH;
    r /= D.tiles_h;
    const std::int64_t o0 = (r % D.out_chunks) * kOut;
    r /= D.out_chunks;
    const std::int64_t g = r % D.g;
    r /= D.g;
    const std::int64_t od = r % D.out[0], n = r / D.out[0];
    const std::int64_t row0 = D.origin(1, h0), col0 = D.origin(2, w0);
    const T* src_n = src + n * D.src_st[0] + g * D.red_ch * D.src_st[1];
    const T* w_g = w + g * D.w_group;
    float acc[kOut] = {};
    for (std::int64_t r0 = 0; r0 < D.red_ch; r0 += D.red_step) {
      const int nr = static_cast<int>(D.red_ch - r0 < D.red_step ? D.red_ch - r0 : D.red_step);
      for (std::int64_t a = 0; a < D.f[0]; ++a) {
        std::int64_t sd = od * D.s[0] - D.p[0] + a * D.d[0];
        if (D.backward) {
          const std::int64_t t = od + D.p[0] - a * D.d[0];
          if (t < 0 || t % D.s[0]) continue;
          sd = t / D.s[0];
        }
        if (sd < 0 || sd >= D.src[0]) continue;  // uniform over the block
        __syncthreads();                         // the previous step's reads are done
        const int patch_size = nr * D.ph * D.pw;
        for (int i = tid; i < patch_size; i += kThreads) {
          const int c = i / (D.ph * D.pw), rem = i % (D.ph * D.pw);
          const std::int64_t sr = row0 + rem / D.pw, sc = col0 + rem % D.pw;
          const bool in = sr >= 0 && sr < D.src[1] && sc >= 0 && sc < D.src[2];
          patch[i] = in ? to_float(src_n[(r0 + c) * D.src_st[1] + sd * D.src_st[2] +
                                         sr * D.src_st[3] + sc * D.src_st[4]])
                        : 0.f;
        }
        for (int i = tid; i < kOut * nr * taps; i += kThreads) {
          const int o = i / (nr * taps), c = (i / taps) % nr, t = i % taps;
          const std::int64_t b = t / D.f[2], e = t % D.f[2];
          wsm[(o * D.red_step + c) * taps + t] =
              o0 + o < D.out_ch ? to_float(w_g[(o0 + o) * D.w_out + (r0 + c) * D.w_red +
                                               a * D.ws[2] + b * D.ws[3] + e * D.ws[4]])
                                : 0.f;
        }
        __syncthreads();
        for (int c = 0; c < nr; ++c)
          for (int b = 0; b < D.f[1]; ++b) {
            const std::int64_t ri = D.patch_index(1, h0, ty, row0, b);
            if (ri < 0) continue;
            for (int e = 0; e < D.f[2]; ++e) {
              const std::int64_t ci = D.patch_index(2, w0, tx, col0, e);
              if (ci < 0) continue;
              const float v = patch[(c * D.ph + ri) * D.pw + ci];
              const float* wt = wsm + c * taps + b * D.f[2] + e;
#pragma unroll
              for (int o = 0; o < kOut; ++o) acc[o] += v * wt[o * D.red_step * taps];
            }
          }
      }
    }
    const std::int64_t h = h0 + ty, wc = w0 + tx;
    if (h < D.out[1] && wc < D.out[2]) {
      T* y = dst + n * D.dst_st[0] + od * D.dst_st[2] + h * D.dst_st[3] + wc * D.dst_st[4];
      for (int o = 0; o < kOut; ++o)
        if (o0 + o < D.out_ch) y[(g * D.out_ch + o0 + o) * D.dst_st[1]] = from_float<T>(acc[o]);
    }
  }
}

// Backward-weights: blocks own (group, 8 k, 8 c, filter depth a, filter row b, split).
struct Weights {
  Geometry G;
  int pw;  // x row segment read by 32 output pixels over all filter columns
  std::int64_t k_chunks, c_chunks, rows, splits;
  CG_HOST_DEVICE std::int64_t owners() const { return G.g * k_chunks * c_chunks * G.f[0] * G.f[1]; }
  std::size_t partial_bytes() const {
    return splits > 1
               ? sizeof(float) * static_cast<std::size_t>(splits * G.g * G.kg * G.cg * G.taps())
               : 0;
  }
};

Weights make_weights(const Problem& pr) {
  Weights W{};
  W.G = make_geometry(pr);
  const Geometry& G = W.G;
  W.pw = static_cast<int>(
      std::min<std::int64_t>((kWP - 1) * G.stride[2] + (G.f[2] - 1) * G.dil[2] + 1, kSmemFloats));
  W.k_chunks = (G.kg + kWK - 1) / kWK, W.c_chunks = (G.cg + kWC - 1) / kWC;
  W.rows = G.n * G.out[0] * G.out[1];
  const std::int64_t owners = W.owners();
  W.splits = owners >= kBusyBlocks
                 ? 1
                 : std::clamp<std::int64_t>((kBusyBlocks + owners - 1) / owners, 1,
                                            std::min<std::int64_t>(W.rows, 128));
  return W;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    weights(Weights W, const T* __restrict__ x, T* dw, const T* __restrict__ dy, float* partial) {
  extern __shared__ float smem[];
  float* dys = smem;             // [kWK][kWP]
  float* xs = smem + kWK * kWP;  // [kWC][pw]
  const Geometry& G = W.G;
  std::int64_t blk = blockIdx.x;
  const std::int64_t sp = blk % W.splits;
  blk /= W.splits;
  const std::int64_t fb = blk % G.f[1];
  blk /= G.f[1];
  const std::int64_t fa = blk % G.f[0];
  blk /= G.f[0];
  const std::int64_t c0 = (blk % W.c_chunks) * kWC;
  blk /= W.c_chunks;
  const std::int64_t k0 = (blk % W.k_chunks) * kWK, g = blk / W.k_chunks;
  const int tid = threadIdx.x, per_block = kWK * kWC * static_cast<int>(G.f[2]);
  float acc[kWItems] = {};
  const std::int64_t first = W.rows * sp / W.splits, last = W.rows * (sp + 1) / W.splits;
  for (std::int64_t row = first; row < last; ++row) {
    const std::int64_t oh = row % G.out[1], od = (row / G.out[1]) % G.out[0],
                       n = row / (G.out[1] * G.out[0]);
    const std::int64_t id = od * G.stride[0] - G.pad[0] + fa * G.dil[0],
                       ih = oh * G.stride[1] - G.pad[1] + fb * G.dil[1];
    if (id < 0 || id >= G.in[0] || ih < 0 || ih >= G.in[1]) continue;  // uniform
    for (std::int64_t ow0 = 0; ow0 < G.out[2]; ow0 += kWP) {
      __syncthreads();
      for (int i = tid; i < kWK * kWP; i += kThreads) {
        const std::int64_t k = k0 + i / kWP, ow = ow0 + i % kWP;
        dys[i] = k < G.kg && ow < G.out[2]
                     ? to_float(dy[n * G.ys[0] + (g * G.kg + k) * G.ys[1] + od * G.ys[2] +
                                   oh * G.ys[3] + ow * G.ys[4]])
                     : 0.f;
      }
      for (int i = tid; i < kWC * W.pw; i += kThreads) {
        const std::int64_t c = c0 + i / W.pw, iw = ow0 * G.stride[2] - G.pad[2] + i % W.pw;
        xs[i] = c < G.cg && iw >= 0 && iw < G.in[2]
                    ? to_float(x[n * G.xs[0] + (g * G.cg + c) * G.xs[1] + id * G.xs[2] +
                                 ih * G.xs[3] + iw * G.xs[4]])
                    : 0.f;
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kWItems; ++j) {
        const int item = tid + j * kThreads;
        if (item >= per_block) break;
        const int k = item / (kWC * static_cast<int>(G.f[2])),
                  c = (item / static_cast<int>(G.f[2])) % kWC, e = item % static_cast<int>(G.f[2]);
        const float* xr = xs + c * W.pw + e * G.dil[2];
        const float* dr = dys + k * kWP;
        float sum = 0.f;
        for (int p = 0; p < kWP; ++p) sum += dr[p] * xr[p * G.stride[2]];
        acc[j] += sum;
      }
    }
  }
  for (int j = 0; j < kWItems; ++j) {
    const int item = tid + j * kThreads;
    if (item >= per_block) break;
    const std::int64_t k = k0 + item / (kWC * G.f[2]), c = c0 + (item / G.f[2]) % kWC,
                       e = item % G.f[2];
    if (k >= G.kg || c >= G.cg) continue;
    if (partial) {
      const std::int64_t dense =
          (((g * G.kg + k) * G.cg + c) * G.f[0] + fa) * G.f[1] * G.f[2] + fb * G.f[2] + e;
      partial[sp * G.g * G.kg * G.cg * G.taps() + dense] = acc[j];
    } else {
      dw[(g * G.kg + k) * G.ws[0] + c * G.ws[1] + fa * G.ws[2] + fb * G.ws[3] + e * G.ws[4]] =
          from_float<T>(acc[j]);
    }
  }
}

// Sums the splits' partials in split order (deterministic) into dw.
template <typename T>
__global__ void sum_splits(Weights W, const float* __restrict__ partial, T* dw) {
  const Geometry& G = W.G;
  const std::int64_t total = G.g * G.kg * G.cg * G.taps();
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    float s = 0.f;
    for (std::int64_t sp = 0; sp < W.splits; ++sp) s += partial[sp * total + i];
    dw[G.w_offset_of_dense(i)] = from_float<T>(s);
  }
}

unsigned grid_for(std::int64_t items) {
  return static_cast<unsigned>(std::min<std::int64_t>(items, std::int64_t{1} << 20));
}

}  // namespace

Status DirectSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction == Direction::backward_weights) {
    const Weights W = make_weights(p);
    if (W.G.f[2] > kWItems * kThreads / (kWK * kWC))
      return not_applicable("backward-weights: filters wider than 16 taps");
    if (W.pw + kWK * kWP > kSmemFloats)
      return not_applicable(
          "backward-weights: the x row segment (stride x dilation too large) "
          "does not fit in 48 KiB of shared memory");
    if (W.owners() * W.splits > 0x7fffffff)
      return not_applicable("backward-weights: more blocks than one launch takes");
    return Status::ok();
  }
  const Tiled t = make_tiled(p);
  if (t.red_step < 1)
    return not_applicable("a " + std::to_string(t.ph) + "x" + std::to_string(t.pw) +
                          " source patch plus the filter does not fit in 48 KiB of shared "
                          "memory (stride x dilation too large for an 8x32 tile)");
  return Status::ok();
}

Result<std::size_t> DirectSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return p.direction == Direction::backward_weights ? make_weights(p).partial_bytes()
                                                    : std::size_t{0};
}

Status DirectSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const {
  const Problem& p = plan.problem;
  return dispatch_dtype(p.dtype, [&]<typename T>() -> Status {
    T* x = static_cast<T*>(t.x.data);
    T* w = static_cast<T*>(t.w.data);
    T* y = static_cast<T*>(t.y.data);
    if (p.direction == Direction::backward_weights) {
      const Weights W = make_weights(p);
      const std::size_t smem = sizeof(float) * (kWK * kWP + kWC * W.pw);
      float* partial = W.splits > 1 ? reinterpret_cast<float*>(ws.data()) : nullptr;
      if (partial && ws.size() < W.partial_bytes())
        return Status{StatusCode::invalid_argument, "gpu:direct: workspace too small"};
      weights<T>
          <<<static_cast<unsigned>(W.owners() * W.splits), kThreads, smem>>>(W, x, w, y, partial);
      if (auto st = check_launch("gpu:direct backward-weights launch"); !st) return st;
      if (!partial) return Status::ok();
      sum_splits<T>
          <<<grid_for((W.G.g * W.G.kg * W.G.cg * W.G.taps() + 255) / 256), 256>>>(W, partial, w);
      return check_launch("gpu:direct split sum launch");
    }
    const Tiled D = make_tiled(p);
    const bool back = D.backward;
    tiled<T><<<grid_for(D.items()), kThreads, D.smem_bytes()>>>(D, back ? y : x, w, back ? x : y);
    return check_launch("gpu:direct launch");
  });
}

}  // namespace convguard::gpu
