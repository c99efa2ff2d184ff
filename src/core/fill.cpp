#include "convguard/fill.hpp"

#include <cstring>

#include "core/tensor_iter.hpp"

namespace convguard {
namespace {

std::uint64_t mix(std::uint64_t z) {  // splitmix64 finaliser
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float value_at(std::uint64_t key, std::int64_t index, FillMode mode) {
  const std::uint64_t h = mix(key ^ mix(static_cast<std::uint64_t>(index)));
  if (mode == FillMode::integer) return static_cast<float>(static_cast<int>(h % 7) - 3);
  return static_cast<float>(h >> 40) * 0x1p-23f - 1.0f;  // [-1, 1)
}

}  // namespace

void fill(TensorView t, TensorRole role, std::uint64_t seed, FillMode mode) {
  const std::uint64_t key = mix(seed * 0x100000001b3ull + static_cast<std::uint64_t>(role));
  const DType dt = t.desc.dtype;
  detail::for_each_element(t.desc, [&](std::int64_t lin, std::int64_t off) {
    store_from_float(t.data, off, dt, value_at(key, lin, mode));
  });
  // Never all zeros: a tiny tensor of integer fills could draw only zeros.
  bool any = false;
  detail::for_each_element(
      t.desc,
      [&](std::int64_t, std::int64_t off) { any = any || load_as_float(t.data, off, dt) != 0.f; },
      false);
  if (!any) store_from_float(t.data, 0, dt, 1.0f);
}

void poison(TensorView t) {
  const std::int64_t n = t.desc.span();
  if (t.desc.dtype == DType::f32) {
    const std::uint32_t nan = 0x7fc00000u;
    auto* p = static_cast<std::uint32_t*>(t.data);
    for (std::int64_t i = 0; i < n; ++i) p[i] = nan;
  } else {
    const std::uint16_t nan = t.desc.dtype == DType::f16 ? 0x7e00u : 0x7fc0u;
    auto* p = static_cast<std::uint16_t*>(t.data);
    for (std::int64_t i = 0; i < n; ++i) p[i] = nan;
  }
}

}  // namespace convguard
