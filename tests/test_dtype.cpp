#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "convguard/dtype.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/transpose.hpp"

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

// cpu:bf16_direct's vector stores round as float_to_bfloat does, bit for bit, in both layouts
// and at the scalar tails: ties, NaN, infinities, denormals, random values.
TEST(DType, Bf16VectorStoresRoundAsTheScalarConversion) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512F";
  std::vector<float> in;
  for (std::uint32_t bits : {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f800000u, 0xff800000u,
                             0x7fc00001u, 0x7f800001u, 0xffffffffu, 0x00000001u, 0x807fffffu,
                             0x7f7fffffu, 0x00008000u, 0x00018000u, 0u, 0x80000000u})
    in.push_back(std::bit_cast<float>(bits));
  std::mt19937 rng(7);
  while (in.size() < 37 * 19) in.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  const std::int64_t W = 37, C = 19;  // [W][C]: vector bodies and scalar tails both ways
  for (const bool channels_last : {true, false}) {
    std::vector<std::uint16_t> out(W * C, 0xdead);
    const std::int64_t dc = channels_last ? 1 : W, dw = channels_last ? C : 1;
    cpu::bf16::store_bf16_avx512(in.data(), C, W, C, out.data(), dc, dw);
    for (std::int64_t w = 0; w < W; ++w)
      for (std::int64_t c = 0; c < C; ++c)
        ASSERT_EQ(out[w * dw + c * dc], float_to_bfloat(in[w * C + c]))
            << std::hex << std::bit_cast<std::uint32_t>(in[w * C + c]) << " at w " << std::dec << w
            << " c " << c << (channels_last ? " (channels-last)" : " (channels-first)");
  }
}

// The staging's fp32 transpose: 16 x 16 register blocks and the ragged edges, at row strides
// wider than the rows.
TEST(DType, F32TransposeMatchesTheDefinition) {
  if (!cpu::fast_transpose()) GTEST_SKIP() << "no AVX-512F, or CONVGUARD_CPU_ISA caps it";
  for (const auto& [rows, cols] : {std::pair{37, 21}, std::pair{16, 16}, std::pair{5, 40}}) {
    const std::int64_t src_row = cols + 3, dst_row = rows + 5;
    std::vector<float> src(rows * src_row), dst(cols * dst_row, -1.0f);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f;
    cpu::transpose_f32_avx512(src.data(), src_row, dst.data(), dst_row, rows, cols);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(dst[j * dst_row + i], src[i * src_row + j])
            << rows << "x" << cols << " at " << i << "," << j;
    for (std::int64_t j = 0; j < cols; ++j)  // nothing past a row's end is written
      for (std::int64_t i = rows; i < dst_row; ++i) ASSERT_EQ(dst[j * dst_row + i], -1.0f);
  }
}
