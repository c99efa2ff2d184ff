#include <gtest/gtest.h>

#include <cmath>

#include "convguard/canonical.hpp"
#include "convguard/fill.hpp"
#include "convguard/reference.hpp"
#include "convguard/verify.hpp"

using namespace convguard;

namespace {
struct Case {
  Problem p;
  HostTensor x, w, y;
  explicit Case(const char* s) : p(*parse_problem(s)), x(x_desc(p)), w(w_desc(p)), y(y_desc(p)) {}
  ConvTensors view() { return {x.view(), w.view(), y.view()}; }
};
}  // namespace

TEST(Verify, ReferenceResultPassesAndExactUnderIntegers) {
  Case c("mb2ic5ih9oc3kh3ph1");
  fill(c.x.view(), TensorRole::x, 1, FillMode::integer);
  fill(c.w.view(), TensorRole::w, 1, FillMode::integer);
  poison(c.y.view());
  ASSERT_TRUE(reference_conv(c.p, c.view()).is_ok());
  auto ref = reference_output(c.p, c.view());
  const Verdict v = compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::integer);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_TRUE(v.exact_required);
  EXPECT_EQ(v.max_abs_error, 0.0);
}

TEST(Verify, PoisonedElementsFail) {
  Case c("mb1ic2ih6oc2kh3");
  fill(c.x.view(), TensorRole::x, 2, FillMode::uniform);
  fill(c.w.view(), TensorRole::w, 2, FillMode::uniform);
  ASSERT_TRUE(reference_conv(c.p, c.view()).is_ok());
  auto ref = reference_output(c.p, c.view());
  static_cast<float*>(c.y.data())[5] = std::nanf("");  // as if never written
  const Verdict v = compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::uniform);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.non_finite, 1);
}

TEST(Verify, SmallErrorsPassLargeFailAndIntegerModeIsExact) {
  Case c("mb1ic8ih6oc4kh3");
  fill(c.x.view(), TensorRole::x, 3, FillMode::uniform);
  fill(c.w.view(), TensorRole::w, 3, FillMode::uniform);
  ASSERT_TRUE(reference_conv(c.p, c.view()).is_ok());
  auto ref = reference_output(c.p, c.view());
  float* y = static_cast<float*>(c.y.data());
  y[0] = std::nextafter(y[0], 10.f);
  EXPECT_TRUE(compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::uniform).ok);
  y[1] += 0.5f;
  const Verdict bad = compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::uniform);
  EXPECT_FALSE(bad.ok);
  EXPECT_GT(bad.rel_error, bad.tolerance);
  // Under integer fills a one-ulp error is a failure for exact families only.
  Case d("mb1ic8ih6oc4kh3");
  fill(d.x.view(), TensorRole::x, 3, FillMode::integer);
  fill(d.w.view(), TensorRole::w, 3, FillMode::integer);
  ASSERT_TRUE(reference_conv(d.p, d.view()).is_ok());
  auto dref = reference_output(d.p, d.view());
  float* dy = static_cast<float*>(d.y.data());
  dy[2] = std::nextafter(dy[2] == 0 ? 1.f : dy[2], 100.f);
  EXPECT_FALSE(compare(d.p, d.y.view(), *dref, Accuracy{true, 1}, FillMode::integer).ok);
  EXPECT_TRUE(compare(d.p, d.y.view(), *dref, Accuracy{false, 1}, FillMode::integer).ok);
}

TEST(Verify, SampledMatchesFull) {
  Case c("mb2ic4ih10oc4kh3ph1");
  fill(c.x.view(), TensorRole::x, 4, FillMode::uniform);
  fill(c.w.view(), TensorRole::w, 4, FillMode::uniform);
  ASSERT_TRUE(reference_conv(c.p, c.view()).is_ok());
  Verdict v = compare_sampled(c.p, c.y.view(), c.view(), Accuracy{}, FillMode::uniform, 100, 1);
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_TRUE(v.sampled);
  static_cast<float*>(c.y.data())[7] *= 3.f;
  v = compare_sampled(c.p, c.y.view(), c.view(), Accuracy{}, FillMode::uniform, 100000, 1);
  EXPECT_FALSE(v.ok);
}

// One wrong element in a large bf16 output: invisible to the norm (it moves by ~1/sqrt(N)), caught
// by the element's own bound. Negative control first: the reference itself passes both.
TEST(Verify, OneWrongElementInALargeBf16OutputIsCaught) {
  Case c("mb4ic8ih64oc64oh64kh3ph1 --dt=bf16");  // 1M output elements, L = 72
  fill(c.x.view(), TensorRole::x, 3, FillMode::uniform);
  fill(c.w.view(), TensorRole::w, 3, FillMode::uniform);
  ASSERT_TRUE(reference_conv(c.p, c.view()).is_ok());
  auto ref = reference_output(c.p, c.view());
  auto mag = reference_output(c.p, c.view(), Operands::magnitude);
  ASSERT_TRUE(ref.is_ok() && mag.is_ok());
  const ReferenceExtras extras{&*mag, nullptr};
  const Verdict good = compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::uniform, extras);
  EXPECT_TRUE(good.ok) << good.message;
  // An element of typical size, negated (a sign bug in one tile edge would do this to a row).
  double rms = 0;
  for (double r : *ref) rms += r * r;
  rms = std::sqrt(rms / static_cast<double>(ref->size()));
  std::size_t i = 1000;
  while (std::fabs((*ref)[i]) < rms || std::fabs((*ref)[i]) > 1.5 * rms) ++i;
  store_from_float(c.y.data(), static_cast<std::int64_t>(i), DType::bf16,
                   static_cast<float>(-(*ref)[i]));
  const Verdict norm_only = compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::uniform);
  EXPECT_TRUE(norm_only.ok) << "the norm alone was expected to miss it: " << norm_only.message;
  const Verdict v = compare(c.p, c.y.view(), *ref, Accuracy{}, FillMode::uniform, extras);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.over_bound, 1);
  EXPECT_NE(v.message.find("outside their own error bound"), std::string::npos) << v.message;
  // Sampled verification judges its points the same way (every element is a point here).
  const Verdict s =
      compare_sampled(c.p, c.y.view(), c.view(), Accuracy{}, FillMode::uniform, 1 << 20, 1);
  EXPECT_FALSE(s.ok) << s.message;
}

// At a long reduction (backward-weights, L = 64 x 128 x 128 = 1M) a solver computing in TF32 is
// inside the fp32 norm tolerance (8 u sqrt(L) = 4.9e-4); the TF32 check separates them.
TEST(Verify, Tf32PassingAsFp32IsCaughtAtLongReductions) {
  Case c("--dir=BWD_W mb64ic2ih128oc2oh128kh3ph1");
  fill(c.x.view(), TensorRole::x, 5, FillMode::uniform);
  fill(c.y.view(), TensorRole::y, 5, FillMode::uniform);
  auto ref = reference_output(c.p, c.view());
  auto mag = reference_output(c.p, c.view(), Operands::magnitude);
  auto tf32 = reference_output(c.p, c.view(), Operands::tf32_rounded);
  ASSERT_TRUE(ref.is_ok() && mag.is_ok() && tf32.is_ok());
  const ReferenceExtras extras{&*mag, &*tf32};
  // An fp32 solver: the reference rounded to f32.
  ASSERT_TRUE(reference_conv(c.p, c.view()).is_ok());
  const Verdict fp32 = compare(c.p, c.w.view(), *ref, Accuracy{}, FillMode::uniform, extras);
  EXPECT_TRUE(fp32.ok) << fp32.message;
  // A TF32 solver: the products of TF32-rounded operands, summed (in fp64 here: better than any
  // real one), rounded to f32.
  for (std::size_t i = 0; i < tf32->size(); ++i)
    store_from_float(c.w.data(), static_cast<std::int64_t>(i), DType::f32,
                     static_cast<float>((*tf32)[i]));
  const Verdict norm_only = compare(c.p, c.w.view(), *ref, Accuracy{}, FillMode::uniform);
  EXPECT_TRUE(norm_only.ok) << "the fp32 norm tolerance was expected to admit TF32 here: "
                            << norm_only.message;
  const Verdict v = compare(c.p, c.w.view(), *ref, Accuracy{}, FillMode::uniform, extras);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("TF32"), std::string::npos) << v.message;
  // Declared TF32, it passes.
  Accuracy declared;
  declared.operand_roundoff = 0x1p-11;
  EXPECT_TRUE(compare(c.p, c.w.view(), *ref, declared, FillMode::uniform, extras).ok);
}

TEST(Fill, SameLogicalValuesInEveryLayoutAndNeverAllZero) {
  auto p = *parse_problem("mb2ic3ih4iw5oc2kh1kw1");
  Problem q = p;
  q.x_layout = Layout::nhwc;
  HostTensor a(x_desc(p)), b(x_desc(q));
  fill(a.view(), TensorRole::x, 9, FillMode::uniform);
  fill(b.view(), TensorRole::x, 9, FillMode::uniform);
  EXPECT_EQ(to_dense_f64(a.view()), to_dense_f64(b.view()));
  auto one = *parse_problem("mb1ic1ih1oc1kh1");
  HostTensor t(x_desc(one));
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    fill(t.view(), TensorRole::x, seed, FillMode::integer);
    EXPECT_NE(static_cast<float*>(t.data())[0], 0.f);
  }
}
