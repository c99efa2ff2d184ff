// Negative end padding (benchdnn's `ih2 kh2 sh2 ph1 oh1`: input rows no window reads). The
// problem model accepts it; this checks that the fp64 reference is right for it (against a
// plain loop nest written here, which never looks at the end padding, only at the output size
// it implies) and that every CPU solver and the transforms that read pad_end either decline
// with a reason or verify, on random problems with negative end padding in some dimensions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "convguard/canonical.hpp"
#include "convguard/reference.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "random_problem.hpp"

using namespace convguard;

namespace {

// A random problem whose end padding is negative in at least one spatial dimension, or
// nullopt when this seed's problem leaves no room for it (output must stay non-empty).
std::optional<Problem> negative_end_pad_problem(std::uint64_t seed) {
  Problem p = convguard::testing::random_problem(seed);
  std::mt19937_64 rng(seed * 7919);
  bool negative = false;
  for (int d = 3 - p.spatial_dims; d < 3; ++d) {
    // The output is non-empty while input + pad_begin + pad_end >= the filter's extent.
    const std::int64_t lowest = p.filter_extent(d) - p.input[d] - p.pad_begin[d];
    if (lowest > -1 || rng() % 3 == 0) continue;
    p.pad_end[d] = lowest + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(-lowest));
    negative = true;
  }
  if (!negative) return std::nullopt;
  p.y_strides.clear();  // the output's size changed; gapped strides were for the old one
  if (!validate(p).is_ok()) return std::nullopt;
  return p;
}

// The convolution by its definition, in dense logical order (N,C,D,H,W; K,C/G,D,H,W): every
// (output point, tap) pair whose input position lies inside the input contributes.
std::vector<double> by_definition(const Problem& p, const std::vector<double>& x,
                                  const std::vector<double>& w, const std::vector<double>& y) {
  const Dims3 O = p.output_dims();
  const Dims3& I = p.input;
  const Dims3& K = p.filter;
  const std::int64_t cg = p.c_per_group(), kg = p.k_per_group();
  std::vector<double> out(p.writes_y() ? y.size() : p.writes_x() ? x.size() : w.size(), 0.0);
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t g = 0; g < p.g; ++g)
      for (std::int64_t kk = 0; kk < kg; ++kk)
        for (std::int64_t cc = 0; cc < cg; ++cc)
          for (std::int64_t o0 = 0; o0 < O[0]; ++o0)
            for (std::int64_t o1 = 0; o1 < O[1]; ++o1)
              for (std::int64_t o2 = 0; o2 < O[2]; ++o2)
                for (std::int64_t t0 = 0; t0 < K[0]; ++t0)
                  for (std::int64_t t1 = 0; t1 < K[1]; ++t1)
                    for (std::int64_t t2 = 0; t2 < K[2]; ++t2) {
                      const std::int64_t o[3] = {o0, o1, o2}, t[3] = {t0, t1, t2};
                      std::int64_t pos[3];
                      bool inside = true;
                      for (int d = 0; d < 3; ++d) {
                        pos[d] = o[d] * p.stride[d] - p.pad_begin[d] + t[d] * p.dilation[d];
                        inside = inside && pos[d] >= 0 && pos[d] < I[d];
                      }
                      if (!inside) continue;
                      const std::int64_t c = g * cg + cc, k = g * kg + kk;
                      const std::int64_t xi =
                          (((n * p.c + c) * I[0] + pos[0]) * I[1] + pos[1]) * I[2] + pos[2];
                      const std::int64_t wi = (((k * cg + cc) * K[0] + t0) * K[1] + t1) * K[2] + t2;
                      const std::int64_t yi = (((n * p.k + k) * O[0] + o0) * O[1] + o1) * O[2] + o2;
                      if (p.writes_y()) out[yi] += x[xi] * w[wi];
                      if (p.writes_x()) out[xi] += y[yi] * w[wi];
                      if (p.writes_w()) out[wi] += x[xi] * y[yi];
                    }
  return out;
}

}  // namespace

TEST(NegativeEndPadding, ReferenceMatchesTheDefinition) {
  int checked = 0;
  for (std::uint64_t seed = 1; seed < 400; ++seed) {
    const auto p = negative_end_pad_problem(seed);
    if (!p) continue;
    TrialTensors t(*p);
    fill_inputs(*p, t, seed, FillMode::uniform);
    const auto ref = reference_output(*p, t.view());
    ASSERT_TRUE(ref.is_ok()) << ref.status().message() << ": " << to_canonical(*p);
    const auto want = by_definition(*p, to_dense_f64(t.x.view()), to_dense_f64(t.w.view()),
                                    to_dense_f64(t.y.view()));
    ASSERT_EQ(ref->size(), want.size()) << to_canonical(*p);
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR((*ref)[i], want[i], 1e-9 * (1 + std::abs(want[i])))
          << "element " << i << " of " << to_canonical(*p) << " (seed " << seed << ")";
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(NegativeEndPadding, EverySolverDeclinesOrVerifies) {
  std::map<std::string, int> verified;
  for (std::uint64_t seed = 1; seed < 300; ++seed) {
    const auto p = negative_end_pad_problem(seed);
    if (!p) continue;
    TrialTensors t(*p);
    TrialOptions o;
    o.fill = seed % 2 ? FillMode::integer : FillMode::uniform;
    o.seed = seed;
    fill_inputs(*p, t, seed, o.fill);
    std::vector<const Solver*> solvers = solvers_on(Device::cpu);
    // The transforms that read pad_end (tile) or grow the input past it (pad_spatial).
    for (const char* id : {"xform:tile(6x6):cpu:direct", "xform:pad_spatial(%4):cpu:direct"}) {
      auto s = resolve_solver(id);
      ASSERT_TRUE(s.is_ok()) << id << ": " << s.status().message();
      solvers.push_back(*s);
    }
    for (const Solver* s : solvers) {
      const TrialResult r = run_trial(*s, *p, t, o);
      if (r.status.code() == StatusCode::not_applicable) {
        EXPECT_FALSE(r.status.message().empty()) << s->id() << " declined without a reason";
        continue;
      }
      ASSERT_TRUE(r.ran()) << s->id() << ": " << r.status.to_string() << "\n  seed " << seed << ": "
                           << to_canonical(*p);
      EXPECT_TRUE(r.verdict && r.verdict->ok)
          << s->id() << ": " << (r.verdict ? r.verdict->message : "") << "\n  seed " << seed << ": "
          << to_canonical(*p);
      ++verified[std::string(s->id())];
    }
  }
  for (const auto& [id, n] : verified) std::printf("  %-34s verified on %d\n", id.c_str(), n);
  EXPECT_GT(verified["cpu:direct"], 50);
  EXPECT_GT(verified["xform:tile(6x6):cpu:direct"], 10);
}
