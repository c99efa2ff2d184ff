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
