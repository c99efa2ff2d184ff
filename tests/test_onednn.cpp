// The oneDNN plugin's solvers, verified like convguard's own: every onednn solver on the property
// test's random problems (every layout, explicit strides, groups, dilation, asymmetric padding,
// 2D/3D, f32/bf16/f16), the wide-channel ones, and a fixed set of shapes where each of oneDNN's
// implementations applies (1x1, 3x3, 7x7 first layers, depthwise, grouped, dilated, 3D; NCHW and
// NHWC). None may be wrong or fail to run, and every solver the plugin lists must verify
// somewhere. Replay one random case with CONVGUARD_PROPERTY_SEED=<seed>.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "plugins/loader.hpp"
#include "random_problem.hpp"

using namespace convguard;

namespace {

std::vector<const Solver*> onednn_solvers() {
  std::vector<const Solver*> v;
  for (const Solver* s : plugins::plugin_solvers()) {
    if (s->id().starts_with("onednn:")) v.push_back(s);
  }
  return v;
}

// Shapes where the blocked, 1x1, depthwise, Winograd and bf16 implementations apply.
std::vector<Problem> targeted_problems() {
  const char* shapes[] = {
      "mb2ic3ih28oc64oh14kh7sh2ph3",  "mb2ic64ih14oc64oh14kh3ph1",
      "mb2ic64ih14oc256oh14kh1",      "mb2ic256ih14oc64oh7kh1sh2",
      "g32mb2ic32ih14oc32oh14kh3ph1", "g4mb2ic32ih14oc32oh14kh3ph1",
      "mb2ic16ih14oc16oh14kh3ph2dh1", "mb2ic16id8oc32od8kd3pd1",
      "mb2ic64id6oc64od6kd1",         "mb1ic32ih13iw9oc48oh7ow5kh3kw2sh2sw2ph1pw0",
  };
  std::vector<Problem> v;
  for (const char* s : shapes) {
    auto base = parse_problem(s);
    EXPECT_TRUE(base.is_ok()) << s;
    if (!base.is_ok()) continue;
    for (Direction d : {Direction::forward, Direction::backward_data, Direction::backward_weights})
      for (DType t : {DType::f32, DType::bf16})
        for (Layout l : {Layout::nchw, Layout::nhwc}) {
          Problem p = *base;
          p.direction = d, p.dtype = t, p.x_layout = p.y_layout = p.w_layout = l;
          v.push_back(p);
        }
  }
  return v;
}

struct Tally {
  std::map<std::string, int> verified;
  std::map<std::string, std::string> declined;
};

// Runs every onednn solver on p (filled per seed); ASSERTs return from it.
void run_all(const Problem& p, std::uint64_t seed, Tally& tally) {
  TrialTensors t(p);
  TrialOptions o;
  o.fill = seed % 2 ? FillMode::integer : FillMode::uniform;
  o.seed = seed;
  fill_inputs(p, t, seed, o.fill);
  for (const Solver* s : onednn_solvers()) {
    const TrialResult r = run_trial(*s, p, t, o);
    if (r.status.code() == StatusCode::not_applicable) {
      EXPECT_FALSE(r.status.message().empty()) << s->id() << " declined without a reason";
      tally.declined[std::string(s->id())] = r.status.message();
      continue;
    }
    ASSERT_TRUE(r.ran()) << s->id() << " failed to run: " << r.status.to_string() << "\n  seed "
                         << seed << ": " << to_canonical(p);
    ASSERT_TRUE(r.verdict.has_value());
    EXPECT_TRUE(r.verdict->ok) << s->id() << ": " << r.verdict->message << "\n  seed " << seed
                               << ": " << to_canonical(p);
    ++tally.verified[std::string(s->id())];
  }
}

}  // namespace

TEST(Onednn, PluginLoadsAndNamesItsLibrary) {
  const auto reports = plugins::load({CONVGUARD_ONEDNN_PLUGIN});
  bool loaded = false;
  for (const auto& r : reports) {
    if (r.path != CONVGUARD_ONEDNN_PLUGIN) continue;
    loaded = r.loaded;
    EXPECT_TRUE(r.loaded) << r.message;
    EXPECT_TRUE(r.description.starts_with("oneDNN ")) << r.description;
  }
  EXPECT_TRUE(loaded);
  EXPECT_GE(onednn_solvers().size(), 6u) << "fewer solvers than gemm and ref in three directions";
}

TEST(Onednn, EverySolverVerifiesAndNoneIsWrong) {
  (void)plugins::load({CONVGUARD_ONEDNN_PLUGIN});
  ASSERT_FALSE(onednn_solvers().empty());
  Tally tally;
  std::uint64_t seed = 1;
  for (const Problem& p : targeted_problems()) run_all(p, seed++, tally);
  const auto [first, count] = convguard::testing::property_seeds(150);
  for (std::uint64_t s = first; s < first + count; ++s) {
    run_all(convguard::testing::random_problem(s), s, tally);
    run_all(convguard::testing::random_wide_problem(s), s, tally);
  }
  for (const auto& [id, n] : tally.verified)
    std::printf("  %-48s verified on %d problems\n", id.c_str(), n);
  if (count > 1) {
    for (const Solver* s : onednn_solvers()) {
      const std::string id(s->id());
      EXPECT_GT(tally.verified[id], 0) << id << " never ran (" << tally.declined[id] << ")";
    }
  }
}
