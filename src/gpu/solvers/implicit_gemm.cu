#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/implicit_gemm.hpp"

namespace convguard::gpu {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16, kThreads = 256;

// The three directions as GEMM operand gathers. `g` is the group (blockIdx.z).
template <typename T, Direction D>
struct Gemm;

// x's element of group g that output pixel `pixel` reads at reduction index r (a channel of the
// group and a tap, Geometry::tap_index), 0 in the padding: forward's A and backward-weights' B.
template <typename T>
__device__ float x_read(const Geometry& G, const T* x, std::int64_t g, std::int64_t pixel,
                        std::int64_t r) {
  std::int64_t n, od, oh, ow, c, a, b, e, id, ih, iw;
  G.out_index(pixel, n, od, oh, ow);
  G.tap_index(r, c, a, b, e);
  if (!G.in_source(od, oh, ow, a, b, e, id, ih, iw)) return 0.f;
  return to_float(x[G.x_at(n, g * G.cg + c, id, ih, iw)]);
}

template <typename T>
struct Gemm<T, Direction::forward> {
  Geometry G;
  const T *x, *w;
  T* y;
  __device__ std::int64_t M() const { return G.n * G.out[0] * G.out[1] * G.out[2]; }
  __device__ std::int64_t N() const { return G.kg; }
  __device__ std::int64_t K() const { return G.cg * G.taps(); }
  __device__ float a(std::int64_t g, std::int64_t m, std::int64_t r) const {
    return x_read(G, x, g, m, r);
  }
  __device__ float b(std::int64_t g, std::int64_t r, std::int64_t col) const {
    std::int64_t c, a, b, e;
    G.tap_index(r, c, a, b, e);
    return to_float(w[G.w_at(g * G.kg + col, c, a, b, e)]);
  }
  __device__ void store(std::int64_t g, std::int64_t m, std::int64_t col, float v) const {
    std::int64_t n, od, oh, ow;
    G.out_index(m, n, od, oh, ow);
    y[G.y_at(n, g * G.kg + col, od, oh, ow)] = from_float<T>(v);
  }
};

template <typename T>
struct Gemm<T, Direction::backward_data> {
  Geometry G;
  T* dx;
  const T *w, *dy;
  __device__ std::int64_t M() const { return G.n * G.in[0] * G.in[1] * G.in[2]; }
  __device__ std::int64_t N() const { return G.cg; }
  __device__ std::int64_t K() const { return G.kg * G.taps(); }
  __device__ float a(std::int64_t g, std::int64_t m, std::int64_t r) const {
    std::int64_t n, id, ih, iw, k, a, b, e;
    G.in_index(m, n, id, ih, iw);
    G.tap_index(r, k, a, b, e);
    const std::int64_t td = id + G.pad[0] - a * G.dil[0], th = ih + G.pad[1] - b * G.dil[1],
                       tw = iw + G.pad[2] - e * G.dil[2];
    if (td < 0 || th < 0 || tw < 0 || td % G.stride[0] || th % G.stride[1] || tw % G.stride[2])
      return 0.f;
    const std::int64_t od = td / G.stride[0], oh = th / G.stride[1], ow = tw / G.stride[2];
    if (od >= G.out[0] || oh >= G.out[1] || ow >= G.out[2]) return 0.f;
    return to_float(dy[G.y_at(n, g * G.kg + k, od, oh, ow)]);
  }
  __device__ float b(std::int64_t g, std::int64_t r, std::int64_t col) const {
    std::int64_t k, a, b, e;
    G.tap_index(r, k, a, b, e);
    return to_float(w[G.w_at(g * G.kg + k, col, a, b, e)]);
  }
  __device__ void store(std::int64_t g, std::int64_t m, std::int64_t col, float v) const {
    std::int64_t n, id, ih, iw;
    G.in_index(m, n, id, ih, iw);
    dx[G.x_at(n, g * G.cg + col, id, ih, iw)] = from_float<T>(v);
  }
};

template <typename T>
struct Gemm<T, Direction::backward_weights> {
  Geometry G;
  const T* x;
  T* dw;
  const T* dy;
  __device__ std::int64_t M() const { return G.kg; }
  __device__ std::int64_t N() const { return G.cg * G.taps(); }
  __device__ std::int64_t K() const { return G.n * G.out[0] * G.out[1] * G.out[2]; }
  __device__ float a(std::int64_t g, std::int64_t m, std::int64_t r) const {
    std::int64_t n, od, oh, ow;
    G.out_index(r, n, od, oh, ow);
    return to_float(dy[G.y_at(n, g * G.kg + m, od, oh, ow)]);
  }
  __device__ float b(std::int64_t g, std::int64_t r, std::int64_t col) const {
    return x_read(G, x, g, r, col);
  }
  __device__ void store(std::int64_t g, std::int64_t m, std::int64_t col, float v) const {
    std::int64_t c, a, b, e;
    G.tap_index(col, c, a, b, e);
    dw[G.w_at(g * G.kg + m, c, a, b, e)] = from_float<T>(v);
  }
};

// 64x64 output tile per block, 4x4 per thread, K in steps of 16 through shared memory.
template <typename Op>
__global__ void __launch_bounds__(kThreads) igemm(Op op) {
  __shared__ float As[kBK][kBM + 4];
  __shared__ float Bs[kBK][kBN + 4];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const std::int64_t g = blockIdx.z;
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.x) * kBM,
                     n0 = static_cast<std::int64_t>(blockIdx.y) * kBN;
  const std::int64_t M = op.M(), N = op.N(), K = op.K();
  float acc[4][4] = {};
  // Loads: A row tid/4, columns (tid%4)*4..+3; B column tid%64, rows (tid/64)*4..+3.
  const int a_row = tid / 4, a_col = (tid % 4) * 4, b_col = tid % 64, b_row = (tid / 64) * 4;
  for (std::int64_t k0 = 0; k0 < K; k0 += kBK) {
    for (int j = 0; j < 4; ++j) {
      const std::int64_t m = m0 + a_row, r = k0 + a_col + j;
      As[a_col + j][a_row] = m < M && r < K ? op.a(g, m, r) : 0.f;
      const std::int64_t rb = k0 + b_row + j, n = n0 + b_col;
      Bs[b_row + j][b_col] = rb < K && n < N ? op.b(g, rb, n) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty * 4 + i], bv[i] = Bs[kk][tx * 4 + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const std::int64_t m = m0 + ty * 4 + i, n = n0 + tx * 4 + j;
      if (m < M && n < N) op.store(g, m, n, acc[i][j]);
    }
}

template <typename Op>
Status launch(const Op& op, std::int64_t M, std::int64_t N, std::int64_t groups) {
  const std::int64_t bx = (M + kBM - 1) / kBM, by = (N + kBN - 1) / kBN;
  if (bx > 0x7fffffff || by > 65535 || groups > 65535)
    return not_applicable("grid too large for one launch");
  igemm<<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by), static_cast<unsigned>(groups)),
          kThreads>>>(op);
  return check_launch("gpu:implicit_gemm launch");
}

}  // namespace

Status ImplicitGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  const Geometry G = make_geometry(p);
  const std::int64_t n_cols = p.direction == Direction::forward         ? G.kg
                              : p.direction == Direction::backward_data ? G.cg
                                                                        : G.cg * G.taps();
  if ((n_cols + kBN - 1) / kBN > 65535 || p.g > 65535)
    return not_applicable("more than 65535 column tiles or groups for one launch");
  return Status::ok();
}

Status ImplicitGemmSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte>) const {
  const Problem& p = plan.problem;
  const Geometry& G = geometry(plan);
  if (forward_tiled_applies(G, p.direction)) return launch_forward_tiled(G, p.dtype, t);
  return dispatch_dtype(p.dtype, [&]<typename T>() -> Status {
    T* x = static_cast<T*>(t.x.data);
    T* w = static_cast<T*>(t.w.data);
    T* y = static_cast<T*>(t.y.data);
    switch (p.direction) {
      case Direction::forward:
        return launch(Gemm<T, Direction::forward>{G, x, w, y}, G.n * G.out[0] * G.out[1] * G.out[2],
                      G.kg, G.g);
      case Direction::backward_data:
        return launch(Gemm<T, Direction::backward_data>{G, x, w, y},
                      G.n * G.in[0] * G.in[1] * G.in[2], G.cg, G.g);
      case Direction::backward_weights:
        return launch(Gemm<T, Direction::backward_weights>{G, x, w, y}, G.kg, G.cg * G.taps(), G.g);
    }
    return Status{StatusCode::internal_error, "direction"};
  });
}

}  // namespace convguard::gpu
