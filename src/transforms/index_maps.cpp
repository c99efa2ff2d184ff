#include "transforms/index_maps.hpp"

#include <cstring>

#include "core/tensor_iter.hpp"

namespace convguard::transforms {
namespace {

// Calls f(inner_offset, caller_offset or -1) for every inner element, parallel over the two
// outer dims. The maps are turned into per-dim caller offsets first, so the loop only adds.
template <class F>
void for_each_mapped(const TensorDesc& inner, const IndexMaps& m,
                     const std::array<std::int64_t, 5>& caller_strides, F&& f) {
  const detail::Shape5 s = detail::shape5(inner);
  std::array<std::vector<std::int64_t>, 5> off;
  for (int d = 0; d < 5; ++d) {
    off[d].resize(static_cast<std::size_t>(s.dims[d]), -1);
    for (std::int64_t i = 0; i < s.dims[d] && i < static_cast<std::int64_t>(m.dim[d].size()); ++i) {
      const std::int64_t c = m.dim[d][i];
      off[d][i] = c < 0 ? -1 : c * caller_strides[d];
    }
  }
  const auto& dm = s.dims;
  const auto& st = s.strides;
  const bool big = dm[0] * dm[1] * dm[2] * dm[3] * dm[4] > 32768;
#pragma omp parallel for collapse(2) schedule(static) if (big)
  for (std::int64_t a = 0; a < dm[0]; ++a) {
    for (std::int64_t b = 0; b < dm[1]; ++b) {
      for (std::int64_t c = 0; c < dm[2]; ++c) {
        for (std::int64_t e = 0; e < dm[3]; ++e) {
          const std::int64_t oa = off[0][a], ob = off[1][b], oc = off[2][c], oe = off[3][e];
          const bool outer_ok = oa >= 0 && ob >= 0 && oc >= 0 && oe >= 0;
          const std::int64_t ibase = a * st[0] + b * st[1] + c * st[2] + e * st[3];
          const std::int64_t cbase = oa + ob + oc + oe;
          for (std::int64_t h = 0; h < dm[4]; ++h) {
            const std::int64_t oh = off[4][h];
            f(ibase + h * st[4], outer_ok && oh >= 0 ? cbase + oh : -1);
          }
        }
      }
    }
  }
}

std::array<std::int64_t, 5> strides5(const TensorDesc& t) {
  return detail::shape5(t).strides;
}

// Dense row-major strides over the logical dims (the layout of accumulate()'s sum).
std::array<std::int64_t, 5> dense_strides5(const TensorDesc& t) {
  const auto d = detail::shape5(t).dims;
  return {d[1] * d[2] * d[3] * d[4], d[2] * d[3] * d[4], d[3] * d[4], d[4], 1};
}

template <class T>
void gather_typed(const TensorView& caller, const IndexMaps& m, const TensorView& inner) {
  const T* src = static_cast<const T*>(caller.data);
  T* dst = static_cast<T*>(inner.data);
  for_each_mapped(inner.desc, m, strides5(caller.desc),
                  [&](std::int64_t i, std::int64_t c) { dst[i] = c < 0 ? T{0} : src[c]; });
}

template <class T>
void scatter_typed(const TensorView& inner, const IndexMaps& m, const TensorView& caller) {
  const T* src = static_cast<const T*>(inner.data);
  T* dst = static_cast<T*>(caller.data);
  for_each_mapped(inner.desc, m, strides5(caller.desc), [&](std::int64_t i, std::int64_t c) {
    if (c >= 0) dst[c] = src[i];
  });
}

}  // namespace

std::vector<std::int64_t> range_map(std::int64_t length, std::int64_t begin, std::int64_t lo,
                                    std::int64_t hi) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(length));
  for (std::int64_t i = 0; i < length; ++i) {
    const std::int64_t c = begin + i;
    v[i] = c >= lo && c < hi ? c : -1;
  }
  return v;
}

IndexMaps identity_maps(const TensorDesc& t) {
  const auto d = detail::shape5(t).dims;
  IndexMaps m;
  for (int i = 0; i < 5; ++i) m.dim[i] = range_map(d[i], 0, 0, d[i]);
  return m;
}

// All zeros is 0.0 in f32, f16 and bf16, so the copies move raw elements of the dtype's width.
void gather(const TensorView& caller, const IndexMaps& m, const TensorView& inner) {
  if (size_of(inner.desc.dtype) == 4)
    gather_typed<std::uint32_t>(caller, m, inner);
  else
    gather_typed<std::uint16_t>(caller, m, inner);
}

void scatter(const TensorView& inner, const IndexMaps& m, const TensorView& caller) {
  if (size_of(inner.desc.dtype) == 4)
    scatter_typed<std::uint32_t>(inner, m, caller);
  else
    scatter_typed<std::uint16_t>(inner, m, caller);
}

void accumulate(const TensorView& inner, const IndexMaps& m, const TensorDesc& caller,
                double* sum) {
  const DType t = inner.desc.dtype;
  // Two inner elements never map to one caller element, so the parallel adds do not race.
  for_each_mapped(inner.desc, m, dense_strides5(caller), [&](std::int64_t i, std::int64_t c) {
    if (c >= 0) sum[c] += load_as_float(inner.data, i, t);
  });
}

void store_sum(const double* sum, const TensorView& caller) {
  const DType t = caller.desc.dtype;
  detail::for_each_element(caller.desc, [&](std::int64_t lin, std::int64_t off) {
    store_from_float(caller.data, off, t, static_cast<float>(sum[lin]));
  });
}

void zero(const TensorView& t) {
  const std::size_t es = size_of(t.desc.dtype);
  detail::for_each_element(t.desc, [&](std::int64_t, std::int64_t off) {
    std::memset(static_cast<std::byte*>(t.data) + off * static_cast<std::int64_t>(es), 0, es);
  });
}

}  // namespace convguard::transforms
