// Flattened sizes of a problem with 2D treated as 3D of depth 1, so every loop nest in the
// reference and the CPU solvers is written once for both. Internal to convguard.
#pragma once

#include <cstdint>

#include "convguard/problem.hpp"

namespace convguard::detail {

struct Geometry {
  std::int64_t n, g, cg, kg;  // batch, groups, channels per group (in, out)
  std::int64_t id, ih, iw;    // input
  std::int64_t od, oh, ow;    // output
  std::int64_t kd, kh, kw;    // filter
  std::int64_t sd, sh, sw;    // stride
  std::int64_t dd, dh, dw;    // dilation (1 = dense)
  std::int64_t pd, ph, pw;    // padding at the beginning

  std::int64_t c() const { return g * cg; }
  std::int64_t k() const { return g * kg; }
  std::int64_t in_spatial() const { return id * ih * iw; }
  std::int64_t out_spatial() const { return od * oh * ow; }
  std::int64_t taps() const { return kd * kh * kw; }
  bool operator==(const Geometry&) const = default;
};

inline Geometry geometry(const Problem& p) {
  const Dims3 o = p.output_dims();
  return Geometry{p.n,
                  p.g,
                  p.c_per_group(),
                  p.k_per_group(),
                  p.input[0],
                  p.input[1],
                  p.input[2],
                  o[0],
                  o[1],
                  o[2],
                  p.filter[0],
                  p.filter[1],
                  p.filter[2],
                  p.stride[0],
                  p.stride[1],
                  p.stride[2],
                  p.dilation[0],
                  p.dilation[1],
                  p.dilation[2],
                  p.pad_begin[0],
                  p.pad_begin[1],
                  p.pad_begin[2]};
}

}  // namespace convguard::detail
