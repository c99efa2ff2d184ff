#include "conv_args.hpp"

#include <fmt/format.h>

#include "convguard/canonical.hpp"

namespace convguard::torch_ext {
namespace {

// Spatial dims, checking that every per-dim list has one value each.
Result<int> spatial_dims_of(const ConvArgs& a) {
  const auto rank = static_cast<std::int64_t>(a.x_size.size());
  if (rank < 3 || rank > 5) {
    return invalid_argument(fmt::format(
        "x: {} dimensions; convguard takes 1D (N, C, W), 2D (N, C, H, W) and 3D (N, C, D, H, W) "
        "convolutions",
        rank));
  }
  if (static_cast<std::int64_t>(a.w_size.size()) != rank)
    return invalid_argument(fmt::format("w: {} dimensions, x has {}", a.w_size.size(), rank));
  const auto dims = rank - 2;
  const std::pair<const char*, std::span<const std::int64_t>> lists[] = {
      {"stride", a.stride},
      {"padding (start)", a.pad_begin},
      {"padding (end)", a.pad_end},
      {"dilation", a.dilation}};
  for (const auto& [name, v] : lists) {
    if (static_cast<std::int64_t>(v.size()) != dims) {
      return invalid_argument(
          fmt::format("{}: {} values for a {}D convolution", name, v.size(), dims));
    }
  }
  if (a.groups < 1) return invalid_argument(fmt::format("groups: {} (must be >= 1)", a.groups));
  return static_cast<int>(dims);
}

// Copies the per-dim lists into p's Dims3 (D, and H in 1D, stay unit dimensions).
void set_spatial(Problem& p, const ConvArgs& a, int dims) {
  const int first = 3 - dims;
  for (int i = 0; i < dims; ++i) {
    const auto u = static_cast<std::size_t>(i);
    p.input[first + i] = a.x_size[2 + u];
    p.filter[first + i] = a.w_size[2 + u];
    p.stride[first + i] = a.stride[u];
    p.pad_begin[first + i] = a.pad_begin[u];
    p.pad_end[first + i] = a.pad_end[u];
    p.dilation[first + i] = a.dilation[u];
  }
}

}  // namespace

Result<Problem> problem_of(const ConvArgs& a) {
  auto dims = spatial_dims_of(a);
  if (!dims) return dims.status();
  Problem p;
  p.spatial_dims = *dims;
  p.g = a.groups;
  p.n = a.x_size[0];
  p.c = a.x_size[1];
  p.k = a.w_size[0];
  if (p.c % p.g != 0 || a.w_size[1] * p.g != p.c) {
    return invalid_argument(fmt::format(
        "w: {} input channels per group, x has {} channels in {} group(s)", a.w_size[1], p.c, p.g));
  }
  set_spatial(p, a, *dims);
  p.direction = a.direction;
  p.dtype = a.dtype;
  p.x_layout = a.x_layout;
  p.w_layout = a.w_layout;
  p.y_layout = a.y_layout;
  if (auto st = validate(p); !st) return st;
  return normalized(p);
}

}  // namespace convguard::torch_ext
