// The randomized property test: many small random problems (2D/3D, every direction, groups and
// depthwise, stride, dilation, asymmetric padding, every layout and explicit strides, fp32/fp16/
// bf16, odd sizes like 17 and 33), and every applicable solver must verify against the fp64
// reference. A failure prints the case seed and problem string; replay one case with
//   CONVGUARD_PROPERTY_SEED=<seed> ./unit_tests --gtest_filter=Property.*
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string_view>
#include <vector>

#include "bf16_pointwise_shapes.hpp"
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "random_problem.hpp"
#include "thread_bits.hpp"

using namespace convguard;
using convguard::testing::random_problem;

namespace {
// Runs every CPU solver on `count` random cases; counts how many each verified on (void: the
// ASSERTs inside return from it).
void every_solver_on_random_cases(std::uint64_t first, std::uint64_t count, bool wide,
                                  std::map<std::string, int>& verified,
                                  std::map<std::string, std::string>& declined) {
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    convguard::testing::RandomCase rc(seed, wide);
    const Problem& p = rc.p;
    TrialTensors& t = rc.t;
    const TrialOptions& o = rc.o;
    for (const Solver* s : solvers_on(Device::cpu)) {
      const TrialResult r = run_trial(*s, p, t, o);
      if (r.status.code() == StatusCode::not_applicable) {
        EXPECT_FALSE(r.status.message().empty()) << s->id() << " declined without a reason";
        declined[std::string(s->id())] = r.status.message();
        continue;
      }
      ASSERT_TRUE(r.ran()) << s->id() << " failed to run: " << r.status.to_string() << "\n  seed "
                           << seed << ": " << to_canonical(p);
      ASSERT_TRUE(r.verdict.has_value());
      EXPECT_TRUE(r.verdict->ok) << s->id() << ": " << r.verdict->message
                                 << "\n  replay: CONVGUARD_PROPERTY_SEED=" << seed
                                 << (wide ? " (wide-channel set)" : "")
                                 << "  problem: " << to_canonical(p)
                                 << (o.fill == FillMode::integer ? " (integer fill)" : "");
      ++verified[std::string(s->id())];
    }
  }
}
}  // namespace

TEST(Property, EveryApplicableSolverMatchesTheReference) {
  const auto [first, count] = convguard::testing::property_seeds(600);
  std::map<std::string, std::string> declined;  // last reason
  std::map<std::string, int> verified;
  every_solver_on_random_cases(first, count, false, verified, declined);
  for (const auto& [id, n] : verified)
    std::printf("  %-26s verified on %d random problems\n", id.c_str(), n);
  if (count > 1) {
    for (const Solver* s : solvers_on(Device::cpu)) {
      const std::string id(s->id());
      // A variant for a wider ISA than this run may use (CONVGUARD_CPU_ISA), for an extension
      // this CPU lacks (AVX512_BF16, AMX), or for state Linux would not grant (AMX's tiles),
      // declines everything.
      if (verified[id] == 0 && (declined[id].find("CONVGUARD_CPU_ISA") != std::string::npos ||
                                declined[id].find("this CPU does not have") != std::string::npos ||
                                declined[id].find("did not grant") != std::string::npos))
        continue;
      // Dense NCHW bf16 problems are rare here: Property.NchwGemmVerifiesOnItsEdgeShapes,
      // Bwdw.RowsBf16VerifiesOnRandomDenseProblems and RowsConv.Bf16VerifiesOnRandomDenseProblems
      // draw their own random ones.
      if (id == "cpu:nchw_gemm:avx512_bf16" || id == "cpu:bwdw_rows:avx512_bf16" ||
          id == "cpu:bwdd_rows:avx512_bf16" || id == "cpu:fwd_rows:avx512_bf16")
        continue;
      // bf16 forward of one group only (34 of this set on an AMX CPU, the C < 32 windows since
      // session 35; none where the CPU has no AMX):
      // Property.Bf16PlanarOnAmxVerifiesForward draws 12 wide ones, the AMX emulation test
      // its shapes.
      if (id == "cpu:bf16_planar:amx_bf16") continue;
      // 1x1 backward-weights only (about 1 problem in 40 here):
      // BwdwGemm.VerifiesOnRandom1x1Problems draws 120 of its own per variant.
      if (id.starts_with("cpu:bwdw_gemm:")) continue;
      EXPECT_GT(verified[id], 20) << id << " was exercised too rarely";
    }
  }
}

// Wide channels (8-256 per group) at small sizes: the vectorised paths that win the benchmarks.
TEST(Property, WideChannelsEveryApplicableSolverMatchesTheReference) {
  const auto [first, count] = convguard::testing::property_seeds(150);
  std::map<std::string, std::string> declined;
  std::map<std::string, int> verified;
  every_solver_on_random_cases(first, count, true, verified, declined);
  for (const auto& [id, n] : verified)
    std::printf("  %-26s verified on %d wide-channel problems\n", id.c_str(), n);
  if (count > 1) {
    for (const char* id : {"cpu:implicit_gemm:avx512", "cpu:implicit_gemm:avx2", "cpu:direct",
                           "cpu:im2col_gemm", "cpu:bwdw:avx512", "cpu:bwdw:avx2"}) {
      if (verified[id] == 0 && declined[id].find("CONVGUARD_CPU_ISA") != std::string::npos)
        continue;  // this run's ISA does not have it
      if (verified[id] == 0 && declined[id].find("AVX") != std::string::npos) continue;
      EXPECT_GT(verified[id], 20) << id << " was exercised too rarely on wide channels ("
                                  << declined[id] << ")";
    }
  }
}

// cpu:bf16_direct in each of its directions on wide-channel bf16 problems (both layouts; explicit
// strides, odd channel counts and dilation come from the general sets above): those hold few of
// them. Its AMX copy on CPUs with AMX, and cpu:bf16_planar:amx_bf16 (forward only) there.
void expect_bf16_direct_verifies(std::string_view id, const std::vector<Direction>& directions) {
  const Solver* s = find_solver(id);
  ASSERT_NE(s, nullptr);
  std::map<Direction, int> verified;
  std::string reason;
  for (std::uint64_t seed = 1; seed < 4000; ++seed) {
    const Problem candidate = convguard::testing::random_wide_problem(seed);
    if (candidate.dtype != DType::bf16 || candidate.g != 1 || verified[candidate.direction] >= 12)
      continue;
    convguard::testing::RandomCase rc(seed, true);
    const TrialResult r = run_trial(*s, rc.p, rc.t, rc.o);
    if (r.status.code() == StatusCode::not_applicable) {
      reason = r.status.message();
      if (reason.find("CPU") != std::string::npos) GTEST_SKIP() << reason;
      continue;
    }
    ASSERT_TRUE(r.ran()) << r.status.to_string() << "\n  problem: " << to_canonical(rc.p);
    ASSERT_TRUE(r.verdict.has_value());
    EXPECT_TRUE(r.verdict->ok) << r.verdict->message << "\n  wide seed " << seed
                               << "  problem: " << to_canonical(rc.p);
    ++verified[rc.p.direction];
  }
  std::printf("  %s verified fwd %d, bwd_data %d, bwd_weights %d\n", std::string(id).c_str(),
              verified[Direction::forward], verified[Direction::backward_data],
              verified[Direction::backward_weights]);
  for (Direction d : {Direction::forward, Direction::backward_data, Direction::backward_weights}) {
    const bool expected = std::find(directions.begin(), directions.end(), d) != directions.end();
    if (expected)
      EXPECT_GE(verified[d], 12) << "direction " << static_cast<int>(d) << " (" << reason << ")";
    else
      EXPECT_EQ(verified[d], 0) << "direction " << static_cast<int>(d) << " should be declined";
  }
}

TEST(Property, Bf16DirectVerifiesInEveryDirection) {
  expect_bf16_direct_verifies(
      "cpu:bf16_direct:avx512_bf16",
      {Direction::forward, Direction::backward_data, Direction::backward_weights});
}

TEST(Property, Bf16PlanarOnAmxVerifiesForward) {
  expect_bf16_direct_verifies("cpu:bf16_planar:amx_bf16", {Direction::forward});
}

// The pointwise path of cpu:bf16_planar:amx_bf16 on the CPU itself (the AVX-512 pairing the
// emulation test replaces: whole 32-pixel runs, masked runs across images, stride 2's even
// elements, stride 3's one by one), both fills.
TEST(Property, Bf16PlanarPointwiseOnAmxVerifies) {
  const Solver* s = find_solver("cpu:bf16_planar:amx_bf16");
  ASSERT_NE(s, nullptr);
  for (const auto& [text, pointwise] : convguard::testing::kBf16PointwiseShapes) {
    const auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text;
    for (const FillMode fill : {FillMode::uniform, FillMode::integer}) {
      TrialTensors t(*p);
      TrialOptions o;
      o.fill = fill;
      fill_inputs(*p, t, 5, fill);
      const TrialResult r = run_trial(*s, *p, t, o);
      if (r.status.code() == StatusCode::not_applicable &&
          r.status.message().find("CPU") != std::string::npos)
        GTEST_SKIP() << r.status.message();
      ASSERT_TRUE(r.ran()) << r.status.to_string() << "\n  problem: " << text;
      ASSERT_TRUE(r.verdict.has_value());
      EXPECT_TRUE(r.verdict->ok) << r.verdict->message << "\n  problem: " << text;
    }
  }
}

TEST(Property, Bf16DirectOnAmxVerifiesInEveryDirection) {
  expect_bf16_direct_verifies(
      "cpu:bf16_direct:amx_bf16",
      {Direction::forward, Direction::backward_data, Direction::backward_weights});
}

// cpu:bf16_direct's backward-weights: its bits do not depend on the thread count (tiles own
// their dW and add chunks in a fixed order; on AMX also over blocks that reload the
// accumulators and splits of the reduction, fixed by the problem), and dW does not depend on an
// x element no window reads (an odd output width's last pixel pair has no second pixel; Inf
// there once made 0 * Inf = NaN). On AMX, x holding Inf anywhere is computed by the AVX512_BF16
// kernel (bf16_amx_bwdw.cpp), so there dW is that kernel's clean result, bit for bit.
TEST(Property, Bf16DirectBackwardWeightsIgnoresUnreadInputAndThreadCount) {
  const char* unread = "--dir=BWD_W --dt=bf16 mb2ic16ih3iw7oc20oh3ow3kh1kw2sw2";
  const int threads = omp_get_max_threads();
  std::vector<std::uint16_t> avx512_clean;
  int checked = 0;
  for (const char* id : {"cpu:bf16_direct:avx512_bf16", "cpu:bf16_direct:amx_bf16"}) {
    SCOPED_TRACE(id);
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr);
    const bool amx = std::string_view(id).ends_with("amx_bf16");
    std::vector<const char*> problems{unread};
    if (amx) {
      problems.push_back("--dir=BWD_W --dt=bf16 mb2ic48ih48iw48oc40oh48ow48kh3kw3ph1pw1");
      problems.push_back("--dir=BWD_W --dt=bf16 mb1ic16ih129iw128oc16oh129ow128kh1kw1");
    }
    for (const char* text : problems) {
      SCOPED_TRACE(text);
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok());
      if (const Status st = s->check(*p); !st) break;
      ++checked;
      TrialTensors t(*p);
      fill_inputs(*p, t, 5, FillMode::uniform);
      std::vector<std::byte> ws(*s->workspace_bytes(*p));
      auto plan = s->plan(*p);
      ASSERT_TRUE(plan.is_ok());
      const TensorView& dw = t.view().w;
      const auto run = [&](int n) {
        omp_set_num_threads(n);
        // The workspace poisoned with NaN: nothing may read what no step wrote.
        std::fill(ws.begin(), ws.end(), std::byte{0xff});
        EXPECT_TRUE(s->run(**plan, t.view(), ws).is_ok());
        const auto* bits = static_cast<const std::uint16_t*>(dw.data);
        return std::vector<std::uint16_t>(bits, bits + dw.desc.elements());
      };
      const std::vector<std::uint16_t> clean = run(1);
      for (int n : {2, 3, 5}) EXPECT_EQ(run(n), clean) << n << " threads";
      if (text != unread) continue;
      if (!amx) avx512_clean = clean;
      // Column 6 of every row of x (NCHW: w is the last dimension) is read by no window.
      auto* xb = static_cast<std::uint16_t*>(t.view().x.data);
      for (std::int64_t i = 6; i < t.view().x.desc.elements(); i += 7) xb[i] = 0x7f80;  // +Inf
      for (int n : {1, 2, 3})
        EXPECT_EQ(run(n), amx ? avx512_clean : clean) << n << " threads, Inf in unread x";
    }
  }
  omp_set_num_threads(threads);
  if (checked == 0) GTEST_SKIP() << "this CPU has no AVX512_BF16";
}

// cpu:nchw_gemm on the shapes its tiles and column runs must get right, in both directions, f32
// and bf16, channels-first (read in place) and channels-last (staged): row and column tails,
// columns spanning images (7x7 planes), stride (a gather forward; a scatter with zeroed gaps
// backward-data), padding (zero columns, dropped columns), groups, 1D and 3D.
TEST(Property, NchwGemmVerifiesOnItsEdgeShapes) {
  struct Shape {
    const char* text;
    bool strided_or_padded;   // backward-weights declines these
    bool beyond_1x1 = false;  // both backward passes decline these
  };
  const Shape shapes[] = {{"mb3ic13ih7iw7oc17oh7ow7kh1kw1", false},
                          {"mb2ic32ih9iw11oc40oh5ow6kh1kw1sh2sw2", true},
                          {"g2mb3ic6ih7iw9oc10oh5ow6kh1kw1sh2sw2ph1pw2", true},
                          {"mb2ic5iw33oc9ow33kw1", false},
                          {"mb1ic8id5ih6iw7oc24od3oh3ow4kd1kh1kw1sd2sh2sw2", true},
                          {"mb1ic64ih1iw1oc64oh1ow1kh1kw1", false},
                          {"mb2ic48ih12iw12oc16oh14ow14kh1kw1ph1pw1", true},
                          {"mb8ic40ih7iw7oc24oh7ow7kh1kw1", false},
                          {"g3mb3ic9ih5iw13oc21oh5ow13kh1kw1", false},
                          // 5 panels per block (not 16), and 1 (a reduction of 1500).
                          {"mb2ic200ih7iw7oc24oh7ow7kh1kw1", false},
                          {"mb1ic1500ih3iw5oc10oh3ow5kh1kw1", false},
                          // Depth blocks (nchw_gemm_kernels.hpp: kDepthBlockWords) with row
                          // tails: fp32 401 = 3 x 128 + 17 forward (bf16 pairs: 128 + 73 words,
                          // the last half empty), 390 backward-data; a 3x3 reduction of 216.
                          {"mb2ic401ih5iw7oc150oh5ow7kh1kw1", false},
                          {"mb1ic150ih7iw7oc390oh7ow7kh1kw1", false},
                          {"mb1ic24ih9iw9oc20oh9ow9kh3kw3ph1pw1", true, true},
                          // Enough panels (17 of 48 columns) for one work item to take all 25
                          // row blocks on 1 or 2 threads: two groups of row blocks (16 + 9, row
                          // tails of 3 and 5), both directions, panels read in place.
                          {"mb1ic197ih28iw28oc195oh28ow28kh1kw1", false},
                          // Blocked backward-data scattering to a stride-2 dx.
                          {"mb2ic40ih9iw11oc400oh5ow6kh1kw1sh2sw2", true},
                          // 1x1 planes: a tile's output run steps over the other channel.
                          {"mb3ic5ih1iw1oc2oh1ow1kh1kw1", false},
                          // Only the width strided, odd: a dx row's last pixel is its last.
                          {"mb2ic16ih5iw9oc24oh5ow5kh1kw1sw2", true},
                          // Negative end padding: the last input row and column are not read.
                          {"mb2ic8ih5iw5oc8oh2ow2kh1kw1sh2sw2ph0pw0", true},
                          // Stride-2 rows of more than 16 outputs: whole 16-column pieces of
                          // the stride-2 pack (fp32 and widened bf16) and a second one.
                          {"mb2ic5ih9iw76oc20oh5ow38kh1kw1sh2sw2", true},
                          // Forward beyond 1x1: a first layer (7x7 stride 2), dilation, groups, 3D.
                          {"mb2ic3ih17iw19oc20oh9ow10kh7kw7sh2sw2ph3pw3", true, true},
                          {"mb1ic3ih20iw70oc20oh10ow35kh7kw7sh2sw2ph3pw3", true, true},
                          {"mb1ic5ih12iw12oc9oh10ow10kh3kw3dh1dw1ph1pw1", true, true},
                          {"g2mb2ic8ih9iw9oc6oh9ow9kh3kw3ph1pw1", true, true},
                          {"mb1ic2id5ih6iw7oc5od5oh6ow7kd3kh3kw3pd1ph1pw1", true, true}};
  int variants_run = 0;
  for (const char* id :
       {"cpu:nchw_gemm:avx512_bf16", "cpu:nchw_gemm:avx512", "cpu:nchw_gemm:avx2"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr);
    const bool in_place_bf16 = std::string(id).ends_with("bf16");
    // A variant this CPU (or CONVGUARD_CPU_ISA) cannot run is skipped alone: the others still run.
    {
      auto probe = parse_problem(std::string(in_place_bf16 ? "--dt=bf16 " : "") + shapes[0].text);
      const Status st = s->check(*probe);
      if (!st && (st.message().find("CPU") != std::string::npos ||
                  st.message().find("CONVGUARD_CPU_ISA") != std::string::npos))
        continue;
    }
    ++variants_run;
    int verified = 0, expected = 0;
    std::uint64_t seed = 11;
    for (const Shape& shape : shapes)
      for (const char* dir : {"", "--dir=BWD_D ", "--dir=BWD_W "})
        for (const char* dt : {"", "--dt=bf16 "})
          for (const char* tag : {"", "--stag=axb --dtag=axb "}) {
            const std::string text = std::string(dir) + dt + tag + shape.text;
            auto p = parse_problem(text);
            ASSERT_TRUE(p.is_ok()) << text;
            const bool weights = p->direction == Direction::backward_weights;
            const bool expect_decline = (in_place_bf16 && (*dt == 0 || *tag != 0)) ||
                                        (weights && (!in_place_bf16 || shape.strided_or_padded)) ||
                                        (p->direction != Direction::forward && shape.beyond_1x1);
            expected += !expect_decline;
            if (const Status st = s->check(*p); !st) {
              EXPECT_TRUE(expect_decline) << id << " declined " << text << ": " << st.message();
              continue;
            }
            EXPECT_FALSE(expect_decline) << id << " took " << text;
            TrialTensors t(*p);
            TrialOptions o;
            o.seed = ++seed;
            fill_inputs(*p, t, o.seed, o.fill);
            const TrialResult r = run_trial(*s, *p, t, o);
            ASSERT_TRUE(r.ran()) << r.status.to_string() << "\n  problem: " << text;
            ASSERT_TRUE(r.verdict.has_value());
            EXPECT_TRUE(r.verdict->ok) << id << ": " << r.verdict->message << "\n  " << text;
            ++verified;
          }
    EXPECT_EQ(verified, expected) << id;
    EXPECT_GT(verified, 20) << id;
    // And 90 random 1x1 problems in its dtype: sizes, groups, stride, padding, 1D/2D/3D, in each
    // direction it computes (backward-weights: bf16, stride 1, no padding).
    std::mt19937_64 rng(2026);
    const auto pick = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    for (int i = 0; i < 90; ++i) {
      const int dir = in_place_bf16 ? i % 3 : i % 2;
      const bool weights = dir == 2;
      const int g = pick(1, 3), dims = pick(1, 3);
      const int st = weights ? 1 : pick(1, 3), pad = weights ? 0 : pick(0, 1);
      const char* dirs[] = {"", "--dir=BWD_D ", "--dir=BWD_W "};
      std::string text = fmt::format("{}{}g{}mb{}ic{}oc{}", dirs[dir],
                                     in_place_bf16 || i % 3 == 0 ? "--dt=bf16 " : "", g, pick(1, 5),
                                     g * pick(1, 40), g * pick(1, 40));
      for (int d = 3 - dims; d < 3; ++d) {
        const char* axis[] = {"d", "h", "w"};
        text += fmt::format("i{}{}k{}1s{}{}p{}{}", axis[d], pick(1, weights ? 40 : 16), axis[d],
                            axis[d], st, axis[d], pad);
      }
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
      if (const Status c = s->check(*p); !c) {
        ADD_FAILURE() << id << " declined " << text << ": " << c.message();
        continue;
      }
      TrialTensors t(*p);
      TrialOptions o;
      o.seed = 100 + i;
      o.fill = i % 2 ? FillMode::integer : FillMode::uniform;
      fill_inputs(*p, t, o.seed, o.fill);
      const TrialResult r = run_trial(*s, *p, t, o);
      ASSERT_TRUE(r.ran()) << r.status.to_string() << "\n  problem: " << text;
      ASSERT_TRUE(r.verdict.has_value());
      EXPECT_TRUE(r.verdict->ok) << id << ": " << r.verdict->message << "\n  " << text;
    }
    // The same bits on 1, 2 and 3 threads (work is split by thread count; sums are not).
    for (const char* text :
         {"mb3ic13ih7iw7oc17oh7ow7kh1kw1", "mb1ic1500ih3iw5oc10oh3ow5kh1kw1",
          "mb2ic401ih5iw7oc150oh5ow7kh1kw1", "--dir=BWD_D mb2ic40ih9iw11oc400oh5ow6kh1kw1sh2sw2",
          "--dir=BWD_D mb2ic32ih9iw11oc40oh5ow6kh1kw1sh2sw2",
          "--dir=BWD_W mb8ic40ih7iw7oc24oh7ow7kh1kw1"}) {
      // The fp32 variants in both dtypes: bf16 in place is widened to fp32 by cpu:nchw_gemm:avx512.
      for (const char* dt : {"--dt=bf16 ", ""}) {
        if (in_place_bf16 && *dt == 0) continue;
        auto p = parse_problem(dt + std::string(text));
        ASSERT_TRUE(p.is_ok()) << text;
        // fp32 backward-weights is declined
        convguard::testing::expect_same_bits_on_every_thread_count(
            *s, *p, id + std::string(" ") + dt + text,
            !in_place_bf16 && p->direction == Direction::backward_weights);
      }
    }
  }
  if (variants_run == 0) GTEST_SKIP() << "no cpu:nchw_gemm variant runs on this CPU";
}

// Negative control: the property test must be able to fail. A solver that is wrong in one
// output element (or leaves one unwritten) is caught.
namespace {
class OffByOne final : public Solver {
 public:
  explicit OffByOne(bool skip) : skip_(skip) {}
  std::string_view id() const override { return "test:off_by_one"; }
  Status check(const Problem& p) const override { return find_solver("cpu:direct")->check(p); }
  Result<std::size_t> workspace_bytes(const Problem& p) const override {
    return find_solver("cpu:direct")->workspace_bytes(p);
  }
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override {
    if (auto s = find_solver("cpu:direct")->run(plan, t, ws); !s) return s;
    const Problem& p = plan.problem;
    const TensorView& out = output_of(p, t);
    const float v = load_as_float(out.data, 0, out.desc.dtype);
    store_from_float(out.data, 0, out.desc.dtype, skip_ ? std::nanf("") : v + 1.0f);
    return Status::ok();
  }

 private:
  bool skip_;
};
}  // namespace

TEST(Property, AWrongSolverIsCaught) {
  for (bool skip : {false, true}) {
    const OffByOne bad(skip);
    for (std::uint64_t seed = 1; seed < 40; ++seed) {
      const Problem p = random_problem(seed);
      TrialTensors t(p);
      fill_inputs(p, t, seed, FillMode::uniform);
      const TrialResult r = run_trial(bad, p, t, TrialOptions{});
      if (!r.ran()) continue;
      EXPECT_FALSE(r.verdict->ok) << to_canonical(p);
    }
  }
}

// cpu:nchw_gemm:avx512 reads dense NCHW bf16 in place, widened to fp32 as it packs (on CPUs with
// AVX512BW and VL): its workspace holds no staged fp32 x and y, so it is far smaller than the same
// problem's from a channels-last caller, which is staged. Without this, a regression to staging
// would pass every verification above unnoticed.
TEST(Property, NchwGemmReadsBf16InPlaceWhereItCan) {
  const Solver* s = find_solver("cpu:nchw_gemm:avx512");
  ASSERT_NE(s, nullptr);
  for (const char* dir : {"", "--dir=BWD_D "}) {
    auto nchw = parse_problem(std::string(dir) + "--dt=bf16 mb2ic32ih16oc32oh16kh1");
    auto nhwc =
        parse_problem(std::string(dir) + "--dt=bf16 --stag=axb --dtag=axb mb2ic32ih16oc32oh16kh1");
    ASSERT_TRUE(nchw.is_ok() && nhwc.is_ok());
    if (const Status st = s->check(*nchw); !st) {
      ASSERT_TRUE(st.message().find("CPU") != std::string::npos ||
                  st.message().find("CONVGUARD_CPU_ISA") != std::string::npos)
          << st.message();
      GTEST_SKIP() << st.message();
    }
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl"))
      GTEST_SKIP() << "no AVX512BW/VL: bf16 is staged to fp32 on this CPU";
    ASSERT_TRUE(s->check(*nhwc).is_ok());
    const std::size_t in_place = *s->workspace_bytes(*nchw), staged = *s->workspace_bytes(*nhwc);
    // Staged: x and y as fp32, 2 x 2 x 32 x 256 x 4 bytes = 128 KiB; in place: a 4 KiB filter.
    EXPECT_LT(in_place + 64 * 1024, staged) << dir << in_place << " vs " << staged;
  }
}

// cpu:nchw_gemm writes outputs over 4 MiB with non-temporal stores (nchw_gemm_entry.hpp:
// Args::stream_out), which the small random problems never reach: a first layer at 224x224
// (12.8 MB fp32, 6.4 MB bf16) and 1x1 layers with a 5.2 MB output, against the reference.
TEST(Property, NchwGemmVerifiesItsStreamedOutputs) {
  int ran = 0;
  for (const char* text : {"mb1ic3ih224oc64oh224kh3ph1", "--dt=bf16 mb1ic3ih224oc64oh224kh3ph1",
                           "mb1ic64ih64oc320oh64kh1", "--dt=bf16 mb1ic64ih64oc640oh64kh1"})
    for (const char* id : {"cpu:nchw_gemm:avx512", "cpu:nchw_gemm:avx512_bf16"}) {
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok()) << text;
      const Solver* s = find_solver(id);
      if (!s->check(*p)) continue;  // the other dtype's variant, or this CPU lacks the ISA
      TrialTensors t(*p);
      TrialOptions o;
      fill_inputs(*p, t, 21, o.fill);
      const TrialResult r = run_trial(*s, *p, t, o);
      ASSERT_TRUE(r.ran()) << id << " " << r.status.to_string() << " " << text;
      EXPECT_TRUE(r.verdict && r.verdict->ok)
          << id << " " << (r.verdict ? r.verdict->message : "") << " " << text;
      ++ran;
    }
  if (ran == 0) GTEST_SKIP() << "no AVX-512 here (or CONVGUARD_CPU_ISA)";
}
