#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "convguard/dtype.hpp"

using namespace convguard;

TEST(DType, HalfRoundTripsEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 0x1p-11f)), 1.0f);  // tie -> even (1.0)
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);  // tie -> even (up)
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 0x1p-11f + 0x1p-20f)), 1.0f + 0x1p-10f);
  EXPECT_EQ(half_to_float(float_to_half(65504.f)), 65504.f);
  EXPECT_EQ(half_to_float(float_to_half(65519.f)), 65504.f);
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(65520.f))));
  EXPECT_EQ(half_to_float(float_to_half(0x1p-24f)), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(half_to_float(float_to_half(0x1p-25f)), 0.f);       // tie -> even (0)
  EXPECT_EQ(half_to_float(float_to_half(0x1.8p-25f)), 0x1p-24f);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
}

TEST(DType, BfloatRoundsToNearestEven) {
  EXPECT_EQ(bfloat_to_float(float_to_bfloat(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(bfloat_to_float(float_to_bfloat(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  EXPECT_EQ(bfloat_to_float(float_to_bfloat(1.0f + 0x1p-8f + 0x1p-16f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(float_to_bfloat(1.0f), 0x3f80);
  EXPECT_TRUE(
      std::isnan(bfloat_to_float(float_to_bfloat(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bfloat_to_float(static_cast<std::uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(float_to_bfloat(f), b);
    }
  }
}

TEST(DType, Parse) {
  EXPECT_EQ(parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("f32"), DType::f32);
  EXPECT_FALSE(parse_dtype("int8").has_value());
}
