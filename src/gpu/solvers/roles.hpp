// Forward and backward-data as one computation, "dst from src and w": forward makes y from x,
// backward-data makes dx from dy, with w's first two dimensions (k, c) in swapped roles. Kernels
// that tile the output (gpu:direct, gpu:winograd) are written once against these roles.
#pragma once

#include "gpu/geometry.hpp"

namespace convguard::gpu {

struct Roles {
  bool backward = false;                  // backward-data
  std::int64_t n = 0, g = 0;              // batch, groups
  std::int64_t out_ch = 0, red_ch = 0;    // per group: dst channels, reduction channels
  std::int64_t out[3] = {}, src[3] = {};  // D, H, W of dst and src
  std::int64_t src_st[5] = {}, dst_st[5] = {}, ws[5] = {};
  // w's strides for one dst channel and one reduction channel; w_group: one group's filters
  // (k is w's first dimension in both directions).
  std::int64_t w_out = 0, w_red = 0, w_group = 0;
};

inline Roles make_roles(const Geometry& G, bool backward_data) {
  Roles r;
  const bool b = backward_data;
  r.backward = b;
  r.n = G.n, r.g = G.g;
  r.out_ch = b ? G.cg : G.kg;
  r.red_ch = b ? G.kg : G.cg;
  for (int i = 0; i < 3; ++i) r.out[i] = b ? G.in[i] : G.out[i], r.src[i] = b ? G.out[i] : G.in[i];
  for (int i = 0; i < 5; ++i) {
    r.src_st[i] = b ? G.ys[i] : G.xs[i];
    r.dst_st[i] = b ? G.xs[i] : G.ys[i];
    r.ws[i] = G.ws[i];
  }
  r.w_out = b ? G.ws[1] : G.ws[0];
  r.w_red = b ? G.ws[0] : G.ws[1];
  r.w_group = G.kg * G.ws[0];
  return r;
}

}  // namespace convguard::gpu
