#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/naive.hpp"

namespace convguard::gpu {
namespace {

// y[n][k][o] = sum over c in k's group and taps t of x[n][c][o*stride - pad + t*dil] * w[k][c][t]
template <typename T>
__global__ void forward(Geometry G, const T* __restrict__ x, const T* __restrict__ w, T* y) {
  const std::int64_t total = G.n * G.g * G.kg * G.out[0] * G.out[1] * G.out[2];
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    std::int64_t r = i;
    const std::int64_t ow = r % G.out[2];
    r /= G.out[2];
    const std::int64_t oh = r % G.out[1];
    r /= G.out[1];
    const std::int64_t od = r % G.out[0];
    r /= G.out[0];
    const std::int64_t k = r % (G.g * G.kg), n = r / (G.g * G.kg);
    const std::int64_t g = k / G.kg;
    double acc = 0;
    for (std::int64_t c = 0; c < G.cg; ++c)
      for (std::int64_t a = 0; a < G.f[0]; ++a) {
        const std::int64_t id = od * G.stride[0] - G.pad[0] + a * G.dil[0];
        if (id < 0 || id >= G.in[0]) continue;
        for (std::int64_t b = 0; b < G.f[1]; ++b) {
          const std::int64_t ih = oh * G.stride[1] - G.pad[1] + b * G.dil[1];
          if (ih < 0 || ih >= G.in[1]) continue;
          for (std::int64_t e = 0; e < G.f[2]; ++e) {
            const std::int64_t iw = ow * G.stride[2] - G.pad[2] + e * G.dil[2];
            if (iw < 0 || iw >= G.in[2]) continue;
            const float xv = to_float(x[n * G.xs[0] + (g * G.cg + c) * G.xs[1] + id * G.xs[2] +
                                        ih * G.xs[3] + iw * G.xs[4]]);
            const float wv =
                to_float(w[k * G.ws[0] + c * G.ws[1] + a * G.ws[2] + b * G.ws[3] + e * G.ws[4]]);
            acc += static_cast<double>(xv) * wv;
          }
        }
      }
    y[n * G.ys[0] + k * G.ys[1] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4]] =
        from_float<T>(static_cast<float>(acc));
  }
}

// dx[n][c][i] = sum over k in c's group and taps t with i = o*stride - pad + t*dil of
// dy[n][k][o] * w[k][c][t]
template <typename T>
__global__ void backward_data(Geometry G, T* dx, const T* __restrict__ w,
                              const T* __restrict__ dy) {
  const std::int64_t total = G.n * G.g * G.cg * G.in[0] * G.in[1] * G.in[2];
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    std::int64_t r = i;
    const std::int64_t iw = r % G.in[2];
    r /= G.in[2];
    const std::int64_t ih = r % G.in[1];
    r /= G.in[1];
    const std::int64_t id = r % G.in[0];
    r /= G.in[0];
    const std::int64_t c = r % (G.g * G.cg), n = r / (G.g * G.cg);
    const std::int64_t g = c / G.cg, cc = c % G.cg;
    double acc = 0;
    for (std::int64_t a = 0; a < G.f[0]; ++a) {
      const std::int64_t td = id + G.pad[0] - a * G.dil[0];
      if (td < 0 || td % G.stride[0] != 0 || td / G.stride[0] >= G.out[0]) continue;
      for (std::int64_t b = 0; b < G.f[1]; ++b) {
        const std::int64_t th = ih + G.pad[1] - b * G.dil[1];
        if (th < 0 || th % G.stride[1] != 0 || th / G.stride[1] >= G.out[1]) continue;
        for (std::int64_t e = 0; e < G.f[2]; ++e) {
          const std::int64_t tw = iw + G.pad[2] - e * G.dil[2];
          if (tw < 0 || tw % G.stride[2] != 0 || tw / G.stride[2] >= G.out[2]) continue;
          const std::int64_t od = td / G.stride[0], oh = th / G.stride[1], ow = tw / G.stride[2];
          for (std::int64_t kk = 0; kk < G.kg; ++kk) {
            const std::int64_t k = g * G.kg + kk;
            const float dyv = to_float(
                dy[n * G.ys[0] + k * G.ys[1] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4]]);
            const float wv =
                to_float(w[k * G.ws[0] + cc * G.ws[1] + a * G.ws[2] + b * G.ws[3] + e * G.ws[4]]);
            acc += static_cast<double>(dyv) * wv;
          }
        }
      }
    }
    dx[n * G.xs[0] + c * G.xs[1] + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4]] =
        from_float<T>(static_cast<float>(acc));
  }
}

// dw[k][c][t] = sum over n and output positions o of x[n][c'][o*stride - pad + t*dil] * dy[n][k][o]
template <typename T>
__global__ void backward_weights(Geometry G, const T* __restrict__ x, T* dw,
                                 const T* __restrict__ dy) {
  const std::int64_t total = G.g * G.kg * G.cg * G.taps();
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    std::int64_t k, cc, a, b, e;
    G.w_index(i, k, cc, a, b, e);
    const std::int64_t c = (k / G.kg) * G.cg + cc;
    double acc = 0;
    for (std::int64_t n = 0; n < G.n; ++n)
      for (std::int64_t od = 0; od < G.out[0]; ++od) {
        const std::int64_t id = od * G.stride[0] - G.pad[0] + a * G.dil[0];
        if (id < 0 || id >= G.in[0]) continue;
        for (std::int64_t oh = 0; oh < G.out[1]; ++oh) {
          const std::int64_t ih = oh * G.stride[1] - G.pad[1] + b * G.dil[1];
          if (ih < 0 || ih >= G.in[1]) continue;
          for (std::int64_t ow = 0; ow < G.out[2]; ++ow) {
            const std::int64_t iw = ow * G.stride[2] - G.pad[2] + e * G.dil[2];
            if (iw < 0 || iw >= G.in[2]) continue;
            const float xv =
                to_float(x[n * G.xs[0] + c * G.xs[1] + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4]]);
            const float dyv = to_float(
                dy[n * G.ys[0] + k * G.ys[1] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4]]);
            acc += static_cast<double>(xv) * dyv;
          }
        }
      }
    dw[G.w_offset_of_dense(i)] = from_float<T>(static_cast<float>(acc));
  }
}

unsigned blocks_for(std::int64_t total) {
  return static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 65535 * 16));
}

}  // namespace

Status NaiveSolver::check(const Problem& p) const {
  return validate(p);
}

Status NaiveSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte>) const {
  const Problem& p = plan.problem;
  const Geometry& G = geometry(plan);
  return dispatch_dtype(p.dtype, [&]<typename T>() {
    T* x = static_cast<T*>(t.x.data);
    T* w = static_cast<T*>(t.w.data);
    T* y = static_cast<T*>(t.y.data);
    switch (p.direction) {
      case Direction::forward:
        forward<T>
            <<<blocks_for(G.n * G.g * G.kg * G.out[0] * G.out[1] * G.out[2]), 256>>>(G, x, w, y);
        break;
      case Direction::backward_data:
        backward_data<T>
            <<<blocks_for(G.n * G.g * G.cg * G.in[0] * G.in[1] * G.in[2]), 256>>>(G, x, w, y);
        break;
      case Direction::backward_weights:
        backward_weights<T><<<blocks_for(G.g * G.kg * G.cg * G.taps()), 256>>>(G, x, w, y);
        break;
    }
    return check_launch("gpu:naive launch");
  });
}

}  // namespace convguard::gpu
