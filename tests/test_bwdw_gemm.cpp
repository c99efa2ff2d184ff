// cpu:bwdw_gemm (1x1 backward-weights as a GEMM over pixels) in both variants: random 1x1
// problems (channel counts around its 64-column panels and 6-row blocks, odd planes for the bf16
// pixel pairs, groups, 1D/2D/3D, stride and padding through the gathered x', batch), its own
// shapes (many chunks, row blocks split over items), and the same bits on every thread count.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/dtype.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "thread_bits.hpp"

using namespace convguard;

namespace {

constexpr const char* kIds[] = {"cpu:bwdw_gemm:avx512", "cpu:bwdw_gemm:avx512_bf16"};

bool runs_here(const Solver& s, bool bf16) {
  auto p = parse_problem(std::string(bf16 ? "--dt=bf16 " : "") + "--dir=BWD_W mb1ic8ih4oc8oh4kh1");
  const Status st = s.check(*p);
  return st || (st.message().find("CPU") == std::string::npos &&
                st.message().find("CONVGUARD_CPU_ISA") == std::string::npos);
}

void expect_verifies(const Solver& s, const std::string& text, std::uint64_t seed) {
  auto p = parse_problem(text);
  ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
  if (const Status c = s.check(*p); !c) {
    ADD_FAILURE() << s.id() << " declined " << text << ": " << c.message();
    return;
  }
  TrialTensors t(*p);
  TrialOptions o;
  o.seed = seed;
  o.fill = seed % 2 ? FillMode::integer : FillMode::uniform;
  fill_inputs(*p, t, o.seed, o.fill);
  const TrialResult r = run_trial(s, *p, t, o);
  ASSERT_TRUE(r.ran()) << r.status.to_string() << "\n  problem: " << text;
  ASSERT_TRUE(r.verdict.has_value());
  EXPECT_TRUE(r.verdict->ok) << s.id() << ": " << r.verdict->message << "\n  " << text;
}

}  // namespace

TEST(BwdwGemm, VerifiesOnRandom1x1Problems) {
  int variants = 0;
  for (const char* id : kIds) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    const bool bf16 = std::string(id).ends_with("bf16");
    if (!runs_here(*s, bf16)) continue;
    ++variants;
    std::mt19937_64 rng(bf16 ? 77 : 76);
    const auto pick = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    for (int i = 0; i < 120; ++i) {
      const int g = pick(1, 2), dims = pick(1, 3);
      // Channels around the 64-wide panel and the 6-row block.
      const int cg = pick(0, 2) == 0 ? pick(60, 140) : pick(1, 20), kg = pick(1, 20);
      std::string text = fmt::format("{}--dir=BWD_W g{}mb{}ic{}oc{}", bf16 ? "--dt=bf16 " : "", g,
                                     pick(1, 4), g * cg, g * kg);
      const bool strided = pick(0, 2) == 0;
      for (int d = 3 - dims; d < 3; ++d) {
        const char* axis[] = {"d", "h", "w"};
        text += fmt::format("i{}{}k{}1s{}{}p{}{}", axis[d], pick(1, 13), axis[d], axis[d],
                            strided ? pick(1, 3) : 1, axis[d], strided ? pick(0, 1) : 0);
      }
      expect_verifies(*s, text, 200 + i);
    }
    // Its own: many chunks (1024 words each) with a word range split inside an image, an odd
    // plane across chunks, row blocks split over items (few panels), a projection layer.
    for (const char* shape :
         {"mb6ic70ih37iw29oc13oh37ow29kh1kw1", "mb40ic16ih7iw7oc64oh7ow7kh1kw1",
          "mb1ic64ih30iw30oc200oh30ow30kh1kw1", "mb2ic96ih14iw14oc40oh7ow7kh1kw1sh2sw2"})
      expect_verifies(*s, std::string(bf16 ? "--dt=bf16 " : "") + "--dir=BWD_W " + shape, 7);
  }
  if (variants == 0) GTEST_SKIP() << "this CPU (or CONVGUARD_CPU_ISA) allows neither variant";
}

TEST(BwdwGemm, DeclinesWhatItDoesNotCompute) {
  const Solver* s = find_solver("cpu:bwdw_gemm:avx512");
  ASSERT_NE(s, nullptr);
  for (const char* text : {"--dir=BWD_W mb1ic8ih6oc8oh6kh3ph1", "mb1ic8ih4oc8oh4kh1",
                           "--dir=BWD_D mb1ic8ih4oc8oh4kh1"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok());
    EXPECT_FALSE(s->check(*p)) << text;
  }
}

TEST(BwdwGemm, SameBitsOnEveryRunAndThreadCount) {
  for (const char* id : kIds) {
    const Solver* s = find_solver(id);
    const bool bf16 = std::string(id).ends_with("bf16");
    for (const char* text : {"mb6ic70ih37iw29oc13oh37ow29kh1kw1", "mb3ic13ih7iw7oc17oh7ow7kh1kw1",
                             "mb2ic96ih14iw14oc40oh7ow7kh1kw1sh2sw2"}) {
      auto p = parse_problem(std::string(bf16 ? "--dt=bf16 " : "") + "--dir=BWD_W " + text);
      ASSERT_TRUE(p.is_ok()) << text;
      convguard::testing::expect_same_bits_on_every_thread_count(*s, *p,
                                                                 id + std::string(" ") + text);
    }
  }
}
