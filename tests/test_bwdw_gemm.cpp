// cpu:bwdw_gemm (1x1 backward-weights as a GEMM over pixels) in all three variants: random 1x1
// problems (channel counts around its 64-column panels and 6-row blocks, odd planes for the bf16
// pixel pairs, groups, 1D/2D/3D, stride and padding through the gathered x', batch), its own
// shapes (many chunks, row blocks split over items), and the same bits on every thread count.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
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

constexpr const char* kIds[] = {"cpu:bwdw_gemm:avx512", "cpu:bwdw_gemm:avx512_bf16",
                                "cpu:bwdw_gemm:avx2"};

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
    // Beyond 1x1 (stride 1, 1D/2D): x padded, dy re-pitched; filters up to 4 with dilation,
    // asymmetric and negative end padding (the output size implies the end padding, as in
    // benchdnn: -1 leaves the last input row or column unread).
    for (int i = 0; i < 80; ++i) {
      const int g = pick(1, 2), dims = pick(1, 2);
      const int cg = pick(0, 3) == 0 ? pick(20, 40) : pick(1, 12), kg = pick(1, 14);
      std::string text = fmt::format("{}--dir=BWD_W g{}mb{}ic{}oc{}", bf16 ? "--dt=bf16 " : "", g,
                                     pick(1, 3), g * cg, g * kg);
      for (int d = 3 - dims; d < 3; ++d) {
        const char* axis[] = {"d", "h", "w"};
        const int k = pick(1, 4), dil = pick(0, 3) == 0 ? 2 : 1, extent = (k - 1) * dil + 1;
        const int in = pick(extent, extent + 12), pb = pick(0, 2);
        const int pe = pick(-1, 2) < 0 && in > extent ? -1 : pick(0, 2);
        text += fmt::format("i{}{}k{}{}d{}{}p{}{}", axis[d], in, axis[d], k, axis[d], dil - 1,
                            axis[d], pb);
        const int out = in + pb + pe - extent + 1;
        text += fmt::format("o{}{}", axis[d], out);
      }
      expect_verifies(*s, text, 500 + i);
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
  for (const char* id : {"cpu:bwdw_gemm:avx512", "cpu:bwdw_gemm:avx2"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr);
    for (const char* text : {"--dir=BWD_W mb1ic8ih8oc8oh4kh3sh2ph1",
                             "--dir=BWD_W mb1ic8id4ih4iw4oc8od4oh4ow4kd3kh3kw3pd1ph1pw1",
                             "mb1ic8ih4oc8oh4kh1", "--dir=BWD_D mb1ic8ih4oc8oh4kh1"}) {
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok());
      EXPECT_FALSE(s->check(*p)) << id << " " << text;
    }
  }
}

TEST(BwdwGemm, SameBitsOnEveryRunAndThreadCount) {
  for (const char* id : kIds) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    const bool bf16 = std::string(id).ends_with("bf16");
    for (const char* text :
         {"mb6ic70ih37iw29oc13oh37ow29kh1kw1", "mb2ic40ih9iw9oc30oh9ow9kh3kw3ph1pw1",
          "mb3ic13ih7iw7oc17oh7ow7kh1kw1", "mb2ic96ih14iw14oc40oh7ow7kh1kw1sh2sw2"}) {
      auto p = parse_problem(std::string(bf16 ? "--dt=bf16 " : "") + "--dir=BWD_W " + text);
      ASSERT_TRUE(p.is_ok()) << text;
      convguard::testing::expect_same_bits_on_every_thread_count(*s, *p,
                                                                 id + std::string(" ") + text);
    }
  }
}

// Beyond 1x1, dy is re-pitched to x's padded row length and the rows' tails are not outputs: x
// must be read as zero there, not multiplied by dy's zero (0 x inf is NaN). x's last column is
// read by no output through tap kw = 0 (padding 1), only by a row tail: infinite there, those
// dW entries must stay finite.
TEST(BwdwGemm, RowTailsReadNoInput) {
  for (const char* id : kIds) {
    const Solver* s = find_solver(id);
    const bool bf16 = std::string(id).ends_with("bf16");
    auto p = parse_problem(std::string(bf16 ? "--dt=bf16 " : "") +
                           "--dir=BWD_W mb2ic5ih6iw7oc4oh6ow7kh3kw3ph1pw1");
    ASSERT_TRUE(p.is_ok());
    if (!s->check(*p)) continue;  // this CPU (or CONVGUARD_CPU_ISA) lacks the ISA
    TrialTensors t(*p);
    fill_inputs(*p, t, 5, FillMode::uniform);
    const ConvTensors v = t.view();
    const std::int64_t rows = 2 * 5 * 6, width = 7;
    for (std::int64_t r = 0; r < rows; ++r)
      store_from_float(v.x.data, r * width + width - 1, p->dtype, INFINITY);
    std::vector<std::byte> ws(*s->workspace_bytes(*p));
    auto plan = s->plan(*p);
    ASSERT_TRUE(plan.is_ok());
    ASSERT_TRUE(s->run(**plan, v, ws).is_ok());
    for (std::int64_t kc = 0; kc < 4 * 5; ++kc)
      for (std::int64_t kh = 0; kh < 3; ++kh) {
        const float got = load_as_float(v.w.data, kc * 9 + kh * 3, p->dtype);
        EXPECT_TRUE(std::isfinite(got)) << id << ": dW[" << kc << "][" << kh << "][0] = " << got;
      }
  }
}
