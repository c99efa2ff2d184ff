// Storage types and their host conversions. fp16 and bf16 are stored as raw 16-bit patterns;
// conversions from float round to nearest even (as hardware does), so a value converted here
// is the value a GPU kernel would have stored.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace convguard {

enum class DType { f32, f16, bf16 };

std::string_view to_string(DType t);  // "f32", "f16", "bf16"
std::optional<DType> parse_dtype(
    std::string_view text);  // accepts f32/fp32/float, f16/fp16/half, bf16
std::size_t size_of(DType t);

std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
// Inline below: the staging converts every element of a bf16 tensor with them.
inline std::uint16_t float_to_bfloat(float f);
inline float bfloat_to_float(std::uint16_t b);

// Read element `index` of a buffer of type t as float / write a float rounded to t.
inline float load_as_float(const void* base, std::int64_t index, DType t);
inline void store_from_float(void* base, std::int64_t index, DType t, float v);

// Unit roundoff of the storage type (half the distance from 1 to the next value).
double unit_roundoff(DType t);
// The largest integer magnitude up to which every integer is exactly representable.
double exact_integer_limit(DType t);

// --- inline definitions -------------------------------------------------------------
// Round to nearest even; a NaN stays a (quiet) NaN.
inline std::uint16_t float_to_bfloat(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

inline float bfloat_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

inline float load_as_float(const void* base, std::int64_t index, DType t) {
  switch (t) {
    case DType::f32:
      return static_cast<const float*>(base)[index];
    case DType::f16:
      return half_to_float(static_cast<const std::uint16_t*>(base)[index]);
    case DType::bf16:
      return bfloat_to_float(static_cast<const std::uint16_t*>(base)[index]);
  }
  return 0.f;
}

inline void store_from_float(void* base, std::int64_t index, DType t, float v) {
  switch (t) {
    case DType::f32:
      static_cast<float*>(base)[index] = v;
      return;
    case DType::f16:
      static_cast<std::uint16_t*>(base)[index] = float_to_half(v);
      return;
    case DType::bf16:
      static_cast<std::uint16_t*>(base)[index] = float_to_bfloat(v);
      return;
  }
}

}  // namespace convguard
