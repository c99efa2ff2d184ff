#include "convguard/dtype.hpp"

#include <bit>
#include <cstring>

namespace convguard {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "f32" || s == "fp32" || s == "float" || s == "float32") return DType::f32;
  if (s == "f16" || s == "fp16" || s == "half" || s == "float16") return DType::f16;
  if (s == "bf16" || s == "bfp16" || s == "bfloat16") return DType::bf16;
  return std::nullopt;
}

std::size_t size_of(DType t) {
  return t == DType::f32 ? 4 : 2;
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32:
      return 0x1p-24;
    case DType::f16:
      return 0x1p-11;
    case DType::bf16:
      return 0x1p-8;
  }
  return 0;
}

double exact_integer_limit(DType t) {
  switch (t) {
    case DType::f32:
      return 0x1p24;
    case DType::f16:
      return 0x1p11;
    case DType::bf16:
      return 0x1p8;
  }
  return 0;
}

// Rounds `value >> shift` to nearest, ties to even.
static std::uint32_t shift_round_even(std::uint32_t value, int shift) {
  if (shift <= 0) return value;
  if (shift > 31) return 0;
  std::uint32_t r = value >> shift;
  std::uint32_t rem = value & ((1u << shift) - 1);
  std::uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  return r;
}

std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // inf or NaN (keep NaN quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7c00u |
                                      (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  }
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  const int exp = static_cast<int>(a >> 23);
  if (exp < 113) {  // below 2^-14: half subnormal (or zero)
    if (exp == 0) return static_cast<std::uint16_t>(sign);
    const std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    return static_cast<std::uint16_t>(sign | shift_round_even(mant, 126 - exp));
  }
  const std::uint32_t base =
      (static_cast<std::uint32_t>(exp - 112) << 10) | ((a & 0x7fffffu) >> 13);
  const std::uint32_t rem = a & 0x1fffu;
  std::uint32_t h = base;
  if (rem > 0x1000u || (rem == 0x1000u && (base & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: mant * 2^-24
      float v = static_cast<float>(mant) * 0x1p-24f;
      bits = sign | std::bit_cast<std::uint32_t>(v);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace convguard
