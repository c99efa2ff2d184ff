// A convolution as the GPU kernels see it: plain integers, passed by value to every kernel.
// 2D problems are 3D with depth 1. Tensor strides are in elements and logical order (N, C, D, H, W
// for x and y; K, C/G, D, R, S for w), so every layout (NCHW, NHWC, explicit strides) is one code
// path; the tensor-core solver asks for dense channels-last.
#pragma once

#include <cstdint>

#include "convguard/problem.hpp"
#include "convguard/tensor.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define CG_HOST_DEVICE __host__ __device__
#else
#define CG_HOST_DEVICE
#endif

namespace convguard::gpu {

struct Geometry {
  std::int64_t n, g, cg, kg;         // batch, groups, channels per group (in, out)
  std::int64_t in[3], f[3], out[3];  // D, H, W of input, filter, output
  std::int64_t stride[3], dil[3], pad[3];
  std::int64_t xs[5], ws[5], ys[5];  // strides: N C D H W / K C D R S / N K D H W
  CG_HOST_DEVICE std::int64_t taps() const { return f[0] * f[1] * f[2]; }
  // Pixel m of a batch of `size` (D, H, W) grids in (N, D, H, W) order, decomposed.
  CG_HOST_DEVICE static void pixel_index(std::int64_t m, const std::int64_t (&size)[3],
                                         std::int64_t& n_, std::int64_t& d, std::int64_t& h,
                                         std::int64_t& w) {
    w = m % size[2], m /= size[2];
    h = m % size[1], m /= size[1];
    d = m % size[0], n_ = m / size[0];
  }
  // Output pixel m (N, OD, OH, OW order), decomposed: the forward GEMM's rows, the backward-weights
  // reduction's index.
  CG_HOST_DEVICE void out_index(std::int64_t m, std::int64_t& n_, std::int64_t& od,
                                std::int64_t& oh, std::int64_t& ow) const {
    pixel_index(m, out, n_, od, oh, ow);
  }
  // Input pixel m (N, ID, IH, IW order), decomposed: backward-data's GEMM rows.
  CG_HOST_DEVICE void in_index(std::int64_t m, std::int64_t& n_, std::int64_t& id,
                               std::int64_t& ih, std::int64_t& iw) const {
    pixel_index(m, in, n_, id, ih, iw);
  }
  // Reduction index r over (channel, D, R, S) taps, decomposed; the channel is r / taps() (a
  // GEMM's channels of one group, C or K, not bounded here).
  CG_HOST_DEVICE void tap_index(std::int64_t r, std::int64_t& ch, std::int64_t& a, std::int64_t& b,
                                std::int64_t& e) const {
    e = r % f[2], r /= f[2];
    b = r % f[1], r /= f[1];
    a = r % f[0], ch = r / f[0];
  }
  // The input pixel (id, ih, iw) that output pixel (od, oh, ow) reads at tap (a, b, e); false
  // where it lies in the padding.
  CG_HOST_DEVICE bool in_source(std::int64_t od, std::int64_t oh, std::int64_t ow, std::int64_t a,
                                std::int64_t b, std::int64_t e, std::int64_t& id, std::int64_t& ih,
                                std::int64_t& iw) const {
    id = od * stride[0] - pad[0] + a * dil[0];
    ih = oh * stride[1] - pad[1] + b * dil[1];
    iw = ow * stride[2] - pad[2] + e * dil[2];
    return id >= 0 && id < in[0] && ih >= 0 && ih < in[1] && iw >= 0 && iw < in[2];
  }
  // Element offsets of x, y and w (their strides) from logical indices; c and k count across
  // groups in x and y, w's c is within the group.
  CG_HOST_DEVICE std::int64_t x_at(std::int64_t n_, std::int64_t c, std::int64_t d, std::int64_t h,
                                   std::int64_t w) const {
    return n_ * xs[0] + c * xs[1] + d * xs[2] + h * xs[3] + w * xs[4];
  }
  CG_HOST_DEVICE std::int64_t y_at(std::int64_t n_, std::int64_t k, std::int64_t d, std::int64_t h,
                                   std::int64_t w) const {
    return n_ * ys[0] + k * ys[1] + d * ys[2] + h * ys[3] + w * ys[4];
  }
  CG_HOST_DEVICE std::int64_t w_at(std::int64_t k, std::int64_t c, std::int64_t a, std::int64_t b,
                                   std::int64_t e) const {
    return k * ws[0] + c * ws[1] + a * ws[2] + b * ws[3] + e * ws[4];
  }
  // Dense index over w's elements in (K, C/G, D, R, S) order, decomposed: k counts across groups.
  CG_HOST_DEVICE void w_index(std::int64_t i, std::int64_t& k, std::int64_t& c, std::int64_t& a,
                              std::int64_t& b, std::int64_t& e) const {
    e = i % f[2], i /= f[2];
    b = i % f[1], i /= f[1];
    a = i % f[0], i /= f[0];
    c = i % cg, k = i / cg;
  }
  // The offset in w (its strides) of dense index i.
  CG_HOST_DEVICE std::int64_t w_offset_of_dense(std::int64_t i) const {
    std::int64_t k, c, a, b, e;
    w_index(i, k, c, a, b, e);
    return w_at(k, c, a, b, e);
  }
};

// Strides of a rank-4 or rank-5 descriptor spread to five (depth stride 0 in 2D).
inline void spread_strides(const TensorDesc& d, std::int64_t* s) {
  if (d.rank == 5) {
    for (int i = 0; i < 5; ++i) s[i] = d.strides[i];
  } else {
    s[0] = d.strides[0], s[1] = d.strides[1], s[2] = 0, s[3] = d.strides[2], s[4] = d.strides[3];
  }
}

inline Geometry make_geometry(const Problem& p) {
  Geometry G{};
  G.n = p.n, G.g = p.g, G.cg = p.c / p.g, G.kg = p.k / p.g;
  for (int i = 0; i < 3; ++i) {
    G.in[i] = p.input[i], G.f[i] = p.filter[i], G.out[i] = p.output(i);
    G.stride[i] = p.stride[i], G.dil[i] = p.dilation[i], G.pad[i] = p.pad_begin[i];
  }
  spread_strides(x_desc(p), G.xs);
  spread_strides(w_desc(p), G.ws);
  spread_strides(y_desc(p), G.ys);
  return G;
}

}  // namespace convguard::gpu
