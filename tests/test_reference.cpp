// The oracle on cases small enough to compute by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "convguard/canonical.hpp"
#include "convguard/reference.hpp"
#include "convguard/trial.hpp"
#include "random_problem.hpp"

using namespace convguard;

namespace {
struct Tensors {
  HostTensor x, w, y;
  ConvTensors view() { return {x.view(), w.view(), y.view()}; }
};
Tensors make(const Problem& p) {
  return {HostTensor(x_desc(p)), HostTensor(w_desc(p)), HostTensor(y_desc(p))};
}
void set(HostTensor& t, std::initializer_list<float> v) {
  std::memcpy(t.data(), v.begin(), v.size() * sizeof(float));
}
}  // namespace

TEST(Reference, Forward2DWithPadding) {
  // 1x1x3x3 input 1..9, 2x2 filter of ones, pad 0: each output is a 2x2 window sum.
  auto p = parse_problem("mb1ic1ih3oc1kh2");
  ASSERT_TRUE(p.is_ok());
  Tensors t = make(*p);
  set(t.x, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  set(t.w, {1, 1, 1, 1});
  auto y = reference_output(*p, t.view());
  ASSERT_TRUE(y.is_ok());
  EXPECT_EQ(*y, (std::vector<double>{12, 16, 24, 28}));
  // With padding 1 the corner output sees only x[0][0].
  p = parse_problem("mb1ic1ih3oc1kh2ph1");
  Tensors u = make(*p);
  set(u.x, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  set(u.w, {1, 2, 3, 4});
  y = reference_output(*p, u.view());
  ASSERT_EQ(y->size(), 16u);
  EXPECT_EQ((*y)[0], 4.0);   // w[1][1] * x[0][0]
  EXPECT_EQ((*y)[15], 9.0);  // w[0][0] * x[2][2]
}

TEST(Reference, StrideDilationGroups) {
  auto p = parse_problem("g2mb1ic2ih5oc2kh2sh2dh1");  // dilation 2, stride 2: out 2x2
  ASSERT_TRUE(p.is_ok());
  Tensors t = make(*p);
  std::vector<float> x(50);
  for (int i = 0; i < 50; ++i) x[i] = static_cast<float>(i);
  std::memcpy(t.x.data(), x.data(), sizeof(float) * 50);
  set(t.w, {1, 0, 0, 0, 0, 0, 0, 1});  // group 0: top-left tap; group 1: bottom-right tap
  auto y = reference_output(*p, t.view());
  ASSERT_TRUE(y.is_ok());
  // group 0, out (0,0) -> x[0][0][0]; out (1,1) -> x[0][2][2] = 12
  EXPECT_EQ((*y)[0], 0.0);
  EXPECT_EQ((*y)[3], 12.0);
  // group 1 (channel 1 = 25 + i): out (0,0) -> tap (1,1) at dilation 2 -> x[1][2][2] = 37
  EXPECT_EQ((*y)[4], 37.0);
}

TEST(Reference, BackwardDataIsTheAdjointOfForward) {
  // <conv(x, w), dy> == <x, conv_bwd_data(dy, w)> and == <w, conv_bwd_weights(x, dy)>.
  auto p = parse_problem("g2mb2ic4ih7iw6oc6oh4ow3kh3kw2sh2sw2ph1pw0dh0dw1");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  Tensors t = make(*p);
  auto fill_seq = [](HostTensor& h, int mul) {
    float* f = static_cast<float*>(h.data());
    for (std::int64_t i = 0; i < h.desc().elements(); ++i)
      f[i] = static_cast<float>((i * mul) % 7 - 3);
  };
  fill_seq(t.x, 3);
  fill_seq(t.w, 5);
  fill_seq(t.y, 2);
  Problem fwd = *p, bwd = *p, wrw = *p;
  bwd.direction = Direction::backward_data;
  wrw.direction = Direction::backward_weights;
  auto y = reference_output(fwd, t.view());
  auto dx = reference_output(bwd, t.view());
  auto dw = reference_output(wrw, t.view());
  ASSERT_TRUE(y.is_ok() && dx.is_ok() && dw.is_ok());
  auto dot = [](const std::vector<double>& a, const HostTensor& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * static_cast<const float*>(b.data())[i];
    return s;
  };
  const double a = dot(*y, t.y), b = dot(*dx, t.x), c = dot(*dw, t.w);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_NE(a, 0.0);
}

TEST(Reference, LayoutDoesNotChangeTheResult) {
  auto p = parse_problem("mb2ic3id3ih4iw5oc2kd2kh3kw2pd1ph1pw0");
  ASSERT_TRUE(p.is_ok());
  Problem q = *p;
  q.x_layout = Layout::nhwc;
  Tensors a = make(*p), b = make(q);
  float* xa = static_cast<float*>(a.x.data());
  float* xb = static_cast<float*>(b.x.data());
  const std::int64_t C = 3, S = 3 * 4 * 5;
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t s = 0; s < S; ++s) {
        const float v = static_cast<float>((n * 31 + c * 7 + s) % 11) - 5;
        xa[(n * C + c) * S + s] = v;
        xb[(n * S + s) * C + c] = v;
      }
  for (std::int64_t i = 0; i < a.w.desc().elements(); ++i) {
    static_cast<float*>(a.w.data())[i] = static_cast<float>(i % 5) - 2;
    static_cast<float*>(b.w.data())[i] = static_cast<float>(i % 5) - 2;
  }
  auto ya = reference_output(*p, a.view());
  auto yb = reference_output(q, b.view());
  ASSERT_TRUE(ya.is_ok() && yb.is_ok());
  EXPECT_EQ(*ya, *yb);
}

TEST(Reference, FullResultMatchesTheDefinitionOnRandomProblems) {
  // reference_output() computes a row at a time (core/reference_rows.cpp); reference_at() is
  // the per-element definition. Only the order of fp64 additions may differ.
  int nonzero = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const Problem p = convguard::testing::random_problem(seed);
    TrialTensors t(p);
    fill_inputs(p, t, seed, FillMode::uniform);
    auto full = reference_output(p, t.view());
    ASSERT_TRUE(full.is_ok()) << full.status().message();
    double scale = 0;
    for (double v : *full) scale = std::max(scale, std::abs(v));
    nonzero += scale > 0;  // zero only where every tap reads padding
    for (std::size_t i = 0; i < full->size(); ++i) {
      const double want = reference_at(p, t.view(), static_cast<std::int64_t>(i));
      ASSERT_NEAR((*full)[i], want, 1e-12 * (1 + scale)) << to_canonical(p) << " element " << i;
    }
  }
  EXPECT_GT(nonzero, 390);
}
