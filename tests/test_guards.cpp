// The guard zones around a trial's tensors and workspace (HostTensor, run_trial): a solver that
// computes the right output but writes one element past it, one element before an input, or one
// byte past the workspace it asked for is a wrong result that says where; a solver that stays
// inside them is not. The solvers here wrap cpu:direct and add the one bad write.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"

using namespace convguard;

namespace {

enum class Overrun { none, after_output, before_x, after_workspace };

class Overrunning final : public Solver {
 public:
  explicit Overrunning(Overrun how) : how_(how) {}
  std::string_view id() const override { return "test:overrun"; }
  Status check(const Problem& p) const override { return direct()->check(p); }
  Result<std::size_t> workspace_bytes(const Problem& p) const override {
    auto ws = direct()->workspace_bytes(p);
    if (!ws) return ws;
    return *ws + 24;  // 24 bytes of its own: not a multiple of 64, so its end is not rounded
  }
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override {
    if (auto s = direct()->run(plan, t, ws.first(ws.size() - 24)); !s) return s;
    const TensorView& out = output_of(plan.problem, t);
    switch (how_) {
      case Overrun::none:
        std::memset(ws.data() + ws.size() - 24, 1, 24);  // all of its own workspace, no further
        break;
      case Overrun::after_output:
        static_cast<float*>(out.data)[out.desc.span()] = 1.0f;
        break;
      case Overrun::before_x:
        static_cast<float*>(t.x.data)[-1] = 1.0f;
        break;
      case Overrun::after_workspace:
        ws.data()[ws.size()] = std::byte{1};
        break;
    }
    return Status::ok();
  }

 private:
  static const Solver* direct() { return find_solver("cpu:direct"); }
  Overrun how_;
};

}  // namespace

TEST(Guards, WritesOutsideTheBuffersAreWrongResultsThatSayWhere) {
  auto p = parse_problem("mb2ic3ih9iw7oc5oh9ow7kh3kw3ph1pw1");
  ASSERT_TRUE(p.is_ok());
  const struct {
    Overrun how;
    const char* where;  // empty: no finding
  } cases[] = {{Overrun::none, ""},
               {Overrun::after_output, "next to y"},
               {Overrun::before_x, "next to x"},
               {Overrun::after_workspace, "next to the workspace"}};
  for (const auto& c : cases) {
    const Overrunning s(c.how);
    TrialTensors t(*p);
    fill_inputs(*p, t, 3, FillMode::uniform);
    const TrialResult r = run_trial(s, *p, t, TrialOptions{});
    ASSERT_TRUE(r.ran()) << r.status.to_string();
    ASSERT_TRUE(r.verdict.has_value());
    if (std::string(c.where).empty()) {
      EXPECT_TRUE(r.verdict->ok) << r.verdict->message;
    } else {
      EXPECT_FALSE(r.verdict->ok) << c.where;
      EXPECT_NE(r.verdict->message.find(c.where), std::string::npos) << r.verdict->message;
    }
  }
}

TEST(Guards, AFreshTensorsGuardsAreIntact) {
  for (const char* text : {"mb1ic1ih1iw1oc1oh1ow1kh1kw1", "mb2ic3ih9iw7oc5oh9ow7kh3kw3ph1pw1"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok());
    TrialTensors t(*p);
    fill_inputs(*p, t, 1, FillMode::uniform);
    EXPECT_TRUE(t.x.guards_intact() && t.w.guards_intact() && t.y.guards_intact()) << text;
    static_cast<unsigned char*>(t.y.data())[t.y.bytes()] ^= 1;  // the first byte after y's span
    EXPECT_FALSE(t.y.guards_intact()) << text;
  }
}
