// cpu:winograd's own shapes in all three directions, beyond what the property test draws: channel
// counts off the transforms' 8 lanes (1, 3, 5, 13), tile batches off them, output sizes that end
// inside a tile, paddings 0 to 2 (backward-data runs with 2 - padding) and -1, groups, a
// reduction long enough for the GEMM's depth blocks, panels in place and packed on either ISA,
// and backward-weights problems of more tiles than one chunk (by the tile cap and by the
// transformed tiles' size), whose chunks' products are added in order; both layouts, verified
// against the fp64 reference. Also: rows the convolution never reads (infinities there), the
// declines, and the same bits on every thread count, one chunk and several.
#include <gtest/gtest.h>

#include <string>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "thread_bits.hpp"

using namespace convguard;

namespace {

constexpr const char* kIds[] = {"cpu:winograd:f4x4_3x3", "cpu:winograd:f2x2_3x3"};

constexpr const char* kShapes[] = {
    "mb2ic3ih11iw13oc5oh11ow13kh3kw3ph1pw1",    // 3 -> 5 channels, 11 x 13 (tiles end inside)
    "mb1ic13ih9iw9oc1oh9ow9kh3kw3ph1pw1",       // 13 channels (8 + 5 lanes), one output
    "mb3ic8ih6iw7oc16oh4ow5kh3kw3",             // no padding
    "mb1ic5ih7iw7oc3oh9ow9kh3kw3ph2pw2",        // padding 2
    "mb1ic4ih8iw10oc6oh7ow9kh3kw3ph1pw0",       // asymmetric padding
    "g3mb2ic6ih9iw9oc9oh9ow9kh3kw3ph1pw1",      // groups
    "mb8ic16ih14iw14oc24oh14ow14kh3kw3ph1pw1",  // 128 F(4x4) tiles, 392 F(2x2) tiles
    "mb1ic200ih6iw6oc8oh6ow6kh3kw3ph1pw1",      // a reduction of 200 channels (depth blocks)
    "mb2ic56ih10iw10oc8oh10ow10kh3kw3ph1pw1",   // 56 columns: AVX-512's 48 in place, then 8
    "mb1ic3ih9iw9oc4oh6ow6kh3kw3",              // end padding -1: x's last row is never read
};

}  // namespace

TEST(Winograd, OwnShapesMatchTheReference) {
  for (const char* id : kIds) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    for (const char* text : kShapes)
      for (const Direction d :
           {Direction::forward, Direction::backward_data, Direction::backward_weights})
        for (const Layout l : {Layout::nchw, Layout::nhwc}) {
          auto p = parse_problem(text);
          ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
          p->direction = d;
          p->x_layout = p->w_layout = p->y_layout = l;
          const Status st = s->check(*p);
          ASSERT_TRUE(st.is_ok()) << id << " " << to_canonical(*p) << ": " << st.message();
          for (const FillMode fill : {FillMode::integer, FillMode::uniform}) {
            TrialTensors tensors(*p);
            TrialOptions o;
            o.fill = fill;
            fill_inputs(*p, tensors, 5, fill);
            const TrialResult r = run_trial(*s, *p, tensors, o);
            ASSERT_TRUE(r.ran()) << id << " " << r.status.to_string() << " " << to_canonical(*p);
            EXPECT_TRUE(r.verdict && r.verdict->ok)
                << id << " " << (r.verdict ? r.verdict->message : "") << " " << to_canonical(*p);
          }
        }
  }
}

// Chunks by the tile cap: 4 images of 260 x 260 are 16900 F(4x4) tiles (two chunks, the second
// of 516) and 67600 F(2x2) tiles (five). Chunks by the transformed tiles' size (8 Mi floats: 910
// F(4x4) tiles of 256 channels, 2048 F(2x2)): 2 images of 96 x 96 are 1152 and 4608 tiles.
TEST(Winograd, BackwardWeightsOverSeveralChunks) {
  for (const char* id : kIds)
    for (const char* text : {"--dir=BWD_W mb4ic4ih260iw260oc5oh260ow260kh3kw3ph1pw1",
                             "--dir=BWD_W mb2ic4ih96iw96oc256oh96ow96kh3kw3ph1pw1"}) {
      const Solver* s = find_solver(id);
      ASSERT_NE(s, nullptr) << id;
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok());
      ASSERT_TRUE(s->check(*p).is_ok()) << id;
      TrialTensors tensors(*p);
      TrialOptions o;
      fill_inputs(*p, tensors, 9, FillMode::uniform);
      const TrialResult r = run_trial(*s, *p, tensors, o);
      ASSERT_TRUE(r.ran()) << id << " " << r.status.to_string();
      EXPECT_TRUE(r.verdict && r.verdict->ok)
          << id << " " << text << " " << (r.verdict ? r.verdict->message : "");
    }
}

// x's rows below what the convolution reads (end padding -1) hold infinities: no output may see
// them, though the tiles' slack covers those rows.
TEST(Winograd, RowsNeverReadStayOutOfTheTiles) {
  for (const char* id : kIds)
    for (const char* text :
         {"mb1ic3ih9iw9oc4oh6ow6kh3kw3", "--dir=BWD_W mb1ic3ih9iw9oc4oh6ow6kh3kw3"}) {
      const Solver* s = find_solver(id);
      ASSERT_NE(s, nullptr) << id;
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok());
      TrialTensors tensors(*p);
      fill_inputs(*p, tensors, 3, FillMode::uniform);
      auto* x = static_cast<float*>(tensors.x.view().data);
      for (int c = 0; c < 3; ++c)
        for (int col = 0; col < 9; ++col) x[(c * 9 + 8) * 9 + col] = 1.f / 0.f;  // row 8
      TrialOptions o;
      const TrialResult r = run_trial(*s, *p, tensors, o);
      ASSERT_TRUE(r.ran()) << id << " " << r.status.to_string();
      EXPECT_TRUE(r.verdict && r.verdict->ok)
          << id << " " << text << " " << (r.verdict ? r.verdict->message : "");
    }
}

TEST(Winograd, DeclinesWhatItsBuffersCannotHold) {
  const struct {
    const char* text;
    const char* reason;
  } cases[] = {
      {"mb1ic100000ih4iw4oc1oh4ow4kh3kw3ph1pw1", "per-thread panel"},
      {"--dir=BWD_W mb1ic1ih1iw1oc1oh70000ow70000kh3kw3ph35000pw35000", "over 2^32 elements"},
      {"mb1099511627776ic1ih1iw1oc1oh1ow1kh3kw3ph1pw1", "over 2^32 elements"},
  };
  for (const char* id : kIds)
    for (const auto& c : cases) {
      const Solver* s = find_solver(id);
      ASSERT_NE(s, nullptr) << id;
      auto p = parse_problem(c.text);
      ASSERT_TRUE(p.is_ok()) << c.text << ": " << p.status().message();
      const Status st = s->check(*p);
      EXPECT_FALSE(st.is_ok()) << id << " " << c.text;
      EXPECT_NE(st.message().find(c.reason), std::string::npos) << c.text << ": " << st.message();
    }
}

TEST(Winograd, SameBitsOnEveryThreadCount) {
  for (const char* id : kIds) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    for (const char* text : {"mb8ic16ih14iw14oc24oh14ow14kh3kw3ph1pw1",
                             "--dir=BWD_D mb8ic16ih14iw14oc24oh14ow14kh3kw3ph1pw1",
                             "--dir=BWD_W mb8ic16ih14iw14oc24oh14ow14kh3kw3ph1pw1",
                             "--dir=BWD_W mb4ic4ih260iw260oc5oh260ow260kh3kw3ph1pw1"}) {
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok()) << text;
      convguard::testing::expect_same_bits_on_every_thread_count(*s, *p,
                                                                 std::string(id) + " " + text);
    }
  }
}
