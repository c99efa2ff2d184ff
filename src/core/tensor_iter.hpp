// Walks every logical element of a strided tensor. Internal to convguard (core and backends).
#pragma once

#include <array>
#include <cstdint>

#include "convguard/tensor.hpp"

namespace convguard::detail {

// Dims and strides as (N, C, D, H, W) / (K, C/G, D, R, S): a 2D tensor gets depth 1 inserted
// after its channel dim, so logical row-major indices are unchanged.
struct Shape5 {
  std::array<std::int64_t, 5> dims{1, 1, 1, 1, 1};
  std::array<std::int64_t, 5> strides{0, 0, 0, 0, 0};
};

inline Shape5 shape5(const TensorDesc& t) {
  Shape5 s;
  for (int i = 0; i < t.rank; ++i) {
    const int j = (t.rank == 4 && i >= 2) ? i + 1 : i;
    s.dims[j] = t.dims[i];
    s.strides[j] = t.strides[i];
  }
  return s;
}

// Calls f(linear_logical_index, element_offset) for every element; the linear index is the
// row-major index over the logical dims. Parallel over the two outer dims.
template <class F>
void for_each_element(const TensorDesc& t, F&& f, bool parallel = true) {
  const Shape5 s = shape5(t);
  const auto& d = s.dims;
  const auto& st = s.strides;
  const std::int64_t inner = d[2] * d[3] * d[4];
#pragma omp parallel for collapse(2) schedule(static) if (parallel && d[0] * d[1] * inner > 32768)
  for (std::int64_t a = 0; a < d[0]; ++a) {
    for (std::int64_t b = 0; b < d[1]; ++b) {
      std::int64_t lin = (a * d[1] + b) * inner;
      for (std::int64_t c = 0; c < d[2]; ++c) {
        for (std::int64_t e = 0; e < d[3]; ++e) {
          const std::int64_t base = a * st[0] + b * st[1] + c * st[2] + e * st[3];
          for (std::int64_t h = 0; h < d[4]; ++h) f(lin++, base + h * st[4]);
        }
      }
    }
  }
}

}  // namespace convguard::detail
