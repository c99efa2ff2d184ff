// cpu:fwd_rows's and cpu:bwdd_rows's own shapes (each in its direction), beyond what the property
// test draws: the tile shapes for narrow
// rows (1, 2, 3 and 4 vectors: 8, 4, 3 or 2 rows a tile) and their short last tiles (a wide
// row's last tile runs with exactly the vectors it has: 44 and 100 pixels), rows flattened into
// one run over the padded rows (7, 5 and 50 wide), every
// channel-block size (1 to 6 channels, and 6 + 4), dilation, asymmetric and zero padding, end
// padding wider than what dx reads, groups, 1D and 3D, the C = 3 first layer at 224 (a wide row
// with a masked tail); f32 and bf16 (staged), both layouts, and the bf16 variant on NCHW bf16;
// verified against the fp64 reference, at 3 threads (integer inputs) and 2 (uniform) whatever the
// host. Also the bf16 variant on random dense problems.
// Strides (forward's column phases, backward-data's stride phases). Also: the declines (more than
// 64 backward-data phases, a stride beyond the dilated filter, padding beyond the filter's
// extent), with their reasons, and the same bits on every thread count (channel blocks sliced
// into work items on a small image included).
#include <gtest/gtest.h>
#include <omp.h>

#include <string>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "random_problem.hpp"
#include "thread_bits.hpp"

using namespace convguard;

namespace {

constexpr const char* kShapes[] = {
    "mb2ic3ih11iw13oc8oh11ow13kh3kw3ph1pw1",          // one vector a row: 8 rows a tile, 3 left
    "mb1ic2ih9iw30oc5oh9ow30kh3kw3ph1pw1",            // two vectors: 4 rows a tile
    "mb1ic4ih7iw40oc6oh7ow40kh3kw3ph1pw1",            // 4 channels: 3 rows x 2 vectors
    "mb1ic5ih6iw50oc7oh6ow50kh3kw3ph1pw1",            // 5 channels: 4 vectors, one row
    "mb1ic1ih5iw70oc9oh5ow70kh3kw1ph1pw0",            // 1 channel, 5 vectors
    "mb2ic10ih9iw33oc6oh9ow33kh3kw3ph1pw1",           // blocks of 6 and 4 channels
    "mb1ic3ih12iw140oc5oh10ow134kh5kw4dh0dw1ph1pw0",  // dilation, asymmetric padding, 9 vectors
    "mb2ic3ih8iw8oc4oh6ow6kh3kw3",                    // no padding (dy is the interior)
    "mb1ic3ih6iw9oc4oh8ow11kh3kw3ph2pw2",             // end padding dx never reads
    "g3mb2ic6ih7iw9oc9oh7ow9kh3kw3ph1pw1",            // groups of 2 channels
    "mb2ic3iw37oc5ow37kw5pw2",                        // 1D
    "mb1ic2id4ih5iw6oc3od4oh5ow6kd3kh3kw3pd1ph1pw1",  // 3D
    "mb1ic3ih224oc64oh224kh3ph1",                     // the first layer
    "mb2ic3ih9iw44oc13oh9ow44kh3kw3ph1pw1",  // 3 vectors: 6-channel rows' exact short tile, 1 x 2x3
    "mb1ic2ih5iw100oc8oh5ow100kh3kw3ph1pw1",  // 7 vectors: short tiles of 3 (6 ch) and 7 (2 ch)
    // Rows flattened (7 of every 9 lanes, 5 of 7: a vector over 2 and 3 row ends; 50 of 52).
    "mb2ic4ih7iw7oc13oh7ow7kh3kw3ph1pw1", "mb1ic3ih9iw5oc8oh9ow5kh3kw3ph1pw1",
    "mb1ic2ih11iw50oc5oh11ow50kh3kw3ph1pw1",
    // Flattened: a tail of padding lanes (kw 1), a dilated tail, a vector over 4 row ends, 1D.
    "mb1ic3ih9iw7oc8oh9ow7kh3kw1ph1pw0", "mb1ic3ih9iw7oc5oh9ow7kh3kw3dh1dw1ph2pw2",
    "mb2ic3ih9iw2oc5oh9ow2kh3kw3ph1pw1", "mb2ic3iw9oc5ow9kw3pw1",
    // AVX2 (8-pixel vectors, 6 x 2 tiles from 6 channels up, 3 x 3 from 3): a row of 12 pixels
    // (one whole vector and 4 lanes), 23 (3 x 3 tiles, 7 lanes last), 8 (one vector: 6 rows for
    // one channel), 17 (a 6-channel row's short tile of 1 vector).
    "mb1ic3ih9iw12oc7oh9ow12kh3kw3ph1pw1", "mb1ic5ih6iw23oc3oh6ow23kh3kw3ph1pw1",
    "mb1ic2ih13iw8oc1oh13ow8kh3kw3ph1pw1", "mb1ic4ih5iw17oc12oh5ow17kh3kw3ph1pw1",
    // Strides (forward: column phases; backward-data: stride phases): the 7 x 7 stride-2 first
    // layer, a 3 x 3 stride 2 on odd sizes, stride 3 with dilation and asymmetric padding, a stride
    // along one axis only (each way), a 2 x 2 stride 2, a dilated 2 x 2 as wide as its stride 4
    // (column phases no tap reads), 1D, 3D with every axis strided, and the first layer at 224
    // (14 vectors).
    "mb1ic3ih30iw30oc8oh15ow15kh7kw7sh2sw2ph3pw3", "mb2ic5ih13iw17oc7oh7ow9kh3kw3sh2sw2ph1pw1",
    "mb1ic5ih17iw23oc7oh6ow8kh3kw4sh3sw3ph1pw2dh2dw1", "mb1ic4ih9iw20oc6oh9ow10kh3kw3sh1sw2ph1pw1",
    "mb1ic4ih12iw11oc6oh6ow11kh3kw3sh2sw1ph1pw1", "mb2ic6ih14iw14oc9oh7ow7kh2kw2sh2sw2",
    "mb1ic3ih20iw20oc5oh5ow5kh2kw2sh4sw4dh2dw2ph0pw0", "mb2ic3iw37oc5ow19kw5sw2pw2",
    "g2mb1ic6id9ih11iw13oc8od4oh5ow4kd3kh3kw3sd2sh2sw3pd1ph1pw1", "mb1ic3ih224oc16oh112kh7sh2ph3",
    // Strided backward-data's phases: ResNet-50's stride-2 3 x 3 (dx 56 -> dy 28: phases of one,
    // two and four taps; flattened 7 x 7 phases at dx 14; rows zipped from two phases a vector at
    // a time), odd dx sizes (phases 7 and 6 wide, 7 and 6 rows), dx rows and columns past what dy
    // reaches (end padding below zero), a dilated 3 x 3 at stride 2 (one phase has every tap, the
    // other none: zeros), stride 3 with a 3-wide filter (one tap a phase), 3 x 2 strides, a 2 x 2
    // at stride 2 with no padding, a wide 1D row, and 3D strided along depth only.
    "mb2ic8ih56iw56oc6oh28ow28kh3kw3sh2sw2ph1pw1", "mb1ic7ih14iw14oc13oh7ow7kh3kw3sh2sw2ph1pw1",
    "mb1ic4ih13iw13oc5oh7ow7kh3kw3sh2sw2ph1pw1", "mb1ic4ih12iw11oc3oh5ow5kh3kw3sh2sw2ph0pw0",
    "mb1ic3ih15iw17oc6oh6ow7kh3kw3sh2sw2dh1dw1ph2pw2", "mb1ic5ih12iw12oc4oh4ow4kh3kw3sh3sw3ph0pw0",
    "mb1ic6ih15iw12oc5oh5ow6kh3kw3sh3sw2ph1pw1", "mb2ic2ih10iw10oc7oh5ow5kh2kw2sh2sw2",
    "mb1ic3iw200oc4ow100kw3sw2pw1",
    "mb1ic3ih9iw45oc5oh5ow23kh3kw3sh2sw2ph1pw1",  // 23 and 22 wide: whole zips, an odd tail
    "mb1ic3id8ih6iw7oc4od4oh6ow7kd3kh3kw3sd2sh1sw1pd1ph1pw1",
    "mb1ic3ih2iw2oc4oh1ow1kh3kw3sh3sw3ph1pw1",        // residue 2 has no dx pixels (dx 2 x 2)
    "mb1ic2id8ih8iw8oc3od2oh2ow2kd4kh4kw4sd4sh4sw4",  // 4 x 4 x 4: 64 phases, the most taken
    // Backward-data's phases over 3 dy channels in one item: its 3 channel blocks sliced.
    "mb1ic13ih14iw14oc3oh7ow7kh3kw3sh2sw2ph1pw1",
};

}  // namespace

TEST(RowsConv, OwnShapesMatchTheReference) {
  for (const char* id :
       {"cpu:fwd_rows:avx512", "cpu:fwd_rows:avx512_bf16", "cpu:fwd_rows:avx2",
        "cpu:bwdd_rows:avx512", "cpu:bwdd_rows:avx512_bf16", "cpu:bwdd_rows:avx2"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr);
    const bool bf16_in_place = std::string(id).ends_with("_bf16");
    int ran = 0, expected = 0;
    bool missing_isa = false;  // this CPU (or CONVGUARD_CPU_ISA) lacks the variant's ISA
    for (const char* text : kShapes)
      for (const Layout l : {Layout::nchw, Layout::nhwc})
        for (const DType t : {DType::f32, DType::bf16}) {
          auto p = parse_problem(text);
          ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
          p->direction = std::string(id).starts_with("cpu:fwd_rows") ? Direction::forward
                                                                     : Direction::backward_data;
          p->dtype = t;
          p->x_layout = p->w_layout = p->y_layout = l;
          // The bf16 variant takes dense channels-first bf16 only.
          if (bf16_in_place && (t != DType::bf16 || l != Layout::nchw)) {
            EXPECT_FALSE(s->check(*p).is_ok()) << id << " " << to_canonical(*p);
            continue;
          }
          expected += 2;
          if (const Status st = s->check(*p); !st) {
            ASSERT_TRUE(st.message().find("CONVGUARD_CPU_ISA") != std::string::npos ||
                        st.message().find("this CPU does not have") != std::string::npos)
                << id << " " << to_canonical(*p) << ": " << st.message();
            missing_isa = true;
            continue;
          }
          for (const FillMode fill : {FillMode::integer, FillMode::uniform}) {
            // 3 threads, then 2, whatever the host: small shapes' channel blocks are sliced into
            // work items by the team's size (rows_conv_kernels.hpp: for_each_item).
            const convguard::testing::ThreadCount team(fill == FillMode::integer ? 3 : 2);
            TrialTensors tensors(*p);
            TrialOptions o;
            o.fill = fill;
            fill_inputs(*p, tensors, 11, fill);
            const TrialResult r = run_trial(*s, *p, tensors, o);
            ASSERT_TRUE(r.ran()) << id << " " << r.status.to_string() << " " << to_canonical(*p);
            EXPECT_TRUE(r.verdict && r.verdict->ok)
                << id << " " << (r.verdict ? r.verdict->message : "") << " " << to_canonical(*p);
            ++ran;
          }
        }
    if (!missing_isa) {
      EXPECT_EQ(ran, expected) << id;
    }
  }
}

TEST(RowsConv, Bf16VerifiesOnRandomDenseProblems) {
  for (const Direction d : {Direction::forward, Direction::backward_data}) {
    const Solver* s = find_solver(d == Direction::forward ? "cpu:fwd_rows:avx512_bf16"
                                                          : "cpu:bwdd_rows:avx512_bf16");
    ASSERT_NE(s, nullptr);
    const auto run = convguard::testing::verify_on_dense_bf16(*s, d, 200);
    if (run.verified == 0 && run.declined.find("CPU") != std::string::npos)
      GTEST_SKIP() << run.declined;
    EXPECT_GE(run.verified, 40) << s->id() << ": " << run.declined;
  }
}

TEST(RowsConv, DeclinesWithItsReasons) {
  const struct {
    const char* id;
    const char* text;
    const char* reason;
  } cases[] = {
      {"cpu:bwdd_rows:avx512", "--dir=BWD_D mb1ic3ih45iw45oc4oh5ow5kh9kw9sh9sw9",
       "more than 64 stride phases"},
      {"cpu:bwdd_rows:avx512", "--dir=BWD_D mb1ic3ih9oc4oh13kh3ph3",
       "beyond (filter - 1) x dilation"},
      {"cpu:bwdd_rows:avx512", "mb1ic3ih9oc4oh9kh3ph1", "backward-data only"},
      {"cpu:bwdd_rows:avx2", "--dir=BWD_D mb2ic6ih14iw14oc9oh7ow7kh1kw1sh2sw2",
       "beyond the dilated filter"},
      {"cpu:fwd_rows:avx2", "mb2ic6ih14iw14oc9oh7ow7kh1kw1sh2sw2", "beyond the dilated filter"},
      {"cpu:fwd_rows:avx512", "mb1ic3ih20iw20oc5oh5ow5kh2kw2sh4sw4ph0pw0",
       "beyond the dilated filter"},
      {"cpu:bwdd_rows:avx2", "--dir=BWD_D mb1ic3ih9oc4oh13kh3ph3",
       "beyond (filter - 1) x dilation"},
      {"cpu:fwd_rows:avx512", "--dir=BWD_D mb1ic3ih9oc4oh9kh3ph1", "forward only"},
      {"cpu:fwd_rows:avx512_bf16", "mb1ic3ih9oc4oh9kh3ph1", "bf16 problems only"},
      // Sizes whose products would overflow int64: declined, not wrapped to a tiny buffer.
      {"cpu:fwd_rows:avx512",
       "mb1ic1ih1iw1oc1oh1ow1kh2kw2ph4294967288pw4294967295dh4294967287dw4294967294",
       "would exceed"},
      {"cpu:bwdw_rows:avx512",
       "--dir=BWD_W mb1ic1ih1iw1oc1oh2ow1kh1kw1sh4294967295sw4294967296ph4294967295pw4294967295",
       "would exceed"},
      // A filter of 2^34 + 1 taps along one axis: declined by the window's size, which check()
      // works out without walking the taps.
      {"cpu:bwdd_rows:avx2", "--dir=BWD_D mb1ic1iw1oc1ow1kw17179869185sw2pw8589934592",
       "would exceed"},
      // Strides whose product would overflow int64: declined by the phase count, not wrapped.
      {"cpu:bwdd_rows:avx2",
       "--dir=BWD_D mb1ic1ih1iw1oc1oh2ow1kh1kw1sh4294967295sw4294967296ph4294967295pw4294967295",
       "more than 64 stride phases"}};
  for (const auto& c : cases) {
    const Solver* s = find_solver(c.id);
    ASSERT_NE(s, nullptr) << c.id;
    auto p = parse_problem(c.text);
    ASSERT_TRUE(p.is_ok()) << c.text;
    const Status st = s->check(*p);
    if (st.message().find("CONVGUARD_CPU_ISA") != std::string::npos ||
        st.message().find("this CPU does not have") != std::string::npos)
      continue;
    EXPECT_FALSE(st.is_ok()) << c.text;
    EXPECT_NE(st.message().find(c.reason), std::string::npos) << c.text << ": " << st.message();
  }
}

// The same bits on every thread count, flattened rows and per-row tiles alike, including outputs
// over 4 MiB (non-temporal stores in the flat path's whole vectors), and stride 2 (forward's
// column phases, backward-data's stride phases): work items follow the thread count, each
// output's sum must not.
TEST(RowsConv, SameBitsOnEveryThreadCount) {
  for (const char* text : {"mb16ic16ih33iw33oc64oh33ow33kh3kw3ph1pw1",      // flat, 4.5 MB out
                           "mb2ic8ih20iw64oc13oh20ow64kh3kw3ph1pw1",        // per row
                           "mb3ic5ih7iw7oc9oh7ow7kh3kw3ph1pw1",             // flat, narrow
                           "mb2ic8ih40iw64oc13oh20ow32kh3kw3sh2sw2ph1pw1",  // column phases
                           // Stride phases zipped into a 4.5 MB dx (non-temporal stores).
                           "mb16ic16ih66iw66oc24oh33ow33kh3kw3sh2sw2ph1pw1",
                           // 5 items of 8 rows, C = 3: channel blocks sliced from 2 threads on
                           // (rows_conv_kernels.hpp: for_each_item), 2 slices, 3 at 3 threads;
                           // and backward-data's phases over 3 dy channels in one item.
                           "mb1ic3ih40iw40oc64oh40ow40kh3kw3ph1pw1",
                           "mb1ic13ih14iw14oc3oh7ow7kh3kw3sh2sw2ph1pw1"})
    for (const char* id :
         {"cpu:fwd_rows:avx512", "cpu:fwd_rows:avx512_bf16", "cpu:fwd_rows:avx2",
          "cpu:bwdd_rows:avx512", "cpu:bwdd_rows:avx512_bf16", "cpu:bwdd_rows:avx2"}) {
      const Solver* s = find_solver(id);
      ASSERT_NE(s, nullptr);
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok()) << text;
      p->direction = std::string(id).starts_with("cpu:fwd_rows") ? Direction::forward
                                                                 : Direction::backward_data;
      if (std::string(id).ends_with("_bf16")) p->dtype = DType::bf16;
      convguard::testing::expect_same_bits_on_every_thread_count(*s, *p,
                                                                 std::string(id) + " " + text);
    }
}
