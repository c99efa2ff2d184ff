// cpu:bwdw's and cpu:bwdw_rows's own shapes, beyond what the property test draws: channel counts
// that fill no vector, groups, stride, dilation, asymmetric padding, the C = 3 first layer, 3D, 1x1
// on both layouts (the channels-first path), batch 1 with a large dW, many rows (row slices); each
// in f32 and bf16, verified against the fp64 reference. Also: the same bits on every run and for
// every thread count (work split and partial sums in a fixed order).
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/dtype.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "random_problem.hpp"
#include "thread_bits.hpp"

using namespace convguard;

namespace {

constexpr const char* kShapes[] = {
    "mb2ic19ih9oc37oh9kh3ph1",                         // K, C not multiples of a vector
    "g2mb2ic34ih8oc50oh8kh3ph1",                       // groups (17 and 25 per group)
    "mb1ic24ih11iw12oc40oh4ow5kh3kw3sh2sw2dh1dw1",     // stride, dilation
    "mb2ic16ih9oc20oh10kh3ph2",                        // padding only at the beginning reads
    "mb1ic3ih32oc64oh16kh7sh2ph3",                     // first layer
    "mb1ic8id5ih6iw6oc20od5oh6ow6kd3kh3kw3pd1ph1pw1",  // 3D
    "mb2ic70ih9oc33oh5kh1sh2",                         // 1x1 stride 2, C not a multiple of 16
    "mb2ic20ih6oc24oh8kh1ph1",                         // 1x1 padded (bf16: x staged, dy not)
    "g2mb1ic64ih7oc64oh7kh1",                          // 1x1 groups
    "mb1ic256ih3oc96oh3kh3ph1",                        // batch 1, large dW, few pixels
    "mb3ic16ih40oc16oh40kh1",                          // small dW, many rows: row slices
    "mb1ic64ih20oc13oh20kh3ph1",                       // K below one tile
    // cpu:bwdw_rows: chunks of rows across od and images, rows of 24 (a masked tail), 3D taps
    "mb4ic3id8ih24iw24oc20od8oh24ow24kd3kh3kw3pd1ph1pw1",
    // width stride 3 with dilation: column phases, a tap's phase offset beyond one phase width
    "mb2ic5ih17iw40oc9oh7ow12kh3kw4sh2sw3dh1dw2ph1pw2",
    // AVX2's 8-pixel steps: rows of 12 (a whole step and 4 masked lanes), 5 output channels over
    // 3 x 4 tiles (a 2-channel edge; AVX-512: 4 x 6, a 1-channel edge), 27 columns (a 3-column
    // edge)
    "mb2ic3ih13iw12oc5oh13ow12kh3kw3ph1pw1",
    // cpu:bwdw_rows's runs: rows of 40 (fp32) and 72 (bf16) whose whole steps end a block of 32
    // steps and whose masked tail opens the next one, and rows of 1100, longer than a block
    "mb2ic3ih12iw40oc8oh12ow40kh3kw3ph1pw1",
    "mb1ic3ih12iw72oc8oh12ow72kh3kw3ph1pw1",
    "mb1ic2ih3iw1100oc5oh3ow1100kh3kw3ph1pw1",
};

std::vector<Problem> problems() {
  std::vector<Problem> v;
  for (const char* s : kShapes)
    for (const Layout l : {Layout::nchw, Layout::nhwc})
      for (const DType t : {DType::f32, DType::bf16}) {
        auto p = parse_problem(s);
        EXPECT_TRUE(p.is_ok()) << s << ": " << p.status().message();
        if (!p) continue;
        p->direction = Direction::backward_weights;
        p->dtype = t;
        p->x_layout = p->w_layout = p->y_layout = l;
        v.push_back(*p);
      }
  return v;
}

}  // namespace

TEST(Bwdw, OwnShapesMatchTheReference) {
  int ran = 0;
  for (const char* id : {"cpu:bwdw:avx512", "cpu:bwdw:avx2", "cpu:bwdw_rows:avx512",
                         "cpu:bwdw_rows:avx512_bf16", "cpu:bwdw_rows:avx2"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    const bool bf16_in_place = std::string(id).ends_with("_bf16");
    for (const Problem& p : problems()) {
      const Status st = s->check(p);
      if (!st) {
        // The bf16 variant takes dense channels-first bf16 only; every other decline is the ISA's.
        const bool theirs = bf16_in_place && (p.dtype != DType::bf16 || p.x_layout != Layout::nchw);
        EXPECT_TRUE(theirs || st.message().find("CONVGUARD_CPU_ISA") != std::string::npos ||
                    st.message().find("this CPU does not have") != std::string::npos)
            << id << " declined " << to_canonical(p) << ": " << st.message();
        continue;
      }
      for (const FillMode fill : {FillMode::integer, FillMode::uniform}) {
        TrialTensors t(p);
        TrialOptions o;
        o.fill = fill;
        fill_inputs(p, t, 7, fill);
        const TrialResult r = run_trial(*s, p, t, o);
        ASSERT_TRUE(r.ran()) << id << ": " << r.status.to_string() << " " << to_canonical(p);
        EXPECT_TRUE(r.verdict && r.verdict->ok)
            << id << ": " << (r.verdict ? r.verdict->message : "") << " " << to_canonical(p);
        ++ran;
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "this CPU (or CONVGUARD_CPU_ISA) allows neither variant";
}

TEST(Bwdw, SameBitsOnEveryRunAndThreadCount) {
  for (const char* text :
       {"mb3ic16ih40oc16oh40kh1", "mb1ic3ih32oc64oh16kh7sh2ph3", "mb2ic64ih12oc96oh12kh3ph1",
        "mb4ic3id8ih24iw24oc20od8oh24ow24kd3kh3kw3pd1ph1pw1"})
    for (const char* id : {"cpu:bwdw:avx512", "cpu:bwdw:avx512 bf16", "cpu:bwdw_rows:avx512",
                           "cpu:bwdw_rows:avx512_bf16", "cpu:bwdw_rows:avx2"}) {
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok()) << text;
      p->direction = Direction::backward_weights;
      std::string name = id;
      if (name.ends_with("bf16")) p->dtype = DType::bf16;
      if (name.ends_with(" bf16")) name.resize(name.size() - 5);  // cpu:bwdw widening bf16
      id = name.c_str();
      const Solver* s = find_solver(id);
      if (std::string(id) == "cpu:bwdw:avx512" && !s->check(*p)) s = find_solver("cpu:bwdw:avx2");
      if (!s->check(*p)) continue;  // this CPU (or CONVGUARD_CPU_ISA) lacks the ISA
      TrialTensors t(*p);
      fill_inputs(*p, t, 3, FillMode::uniform);
      std::vector<std::byte> ws(*s->workspace_bytes(*p));
      auto plan = s->plan(*p);
      ASSERT_TRUE(plan.is_ok());
      const TensorView& dw = t.view().w;
      const std::size_t bytes = static_cast<std::size_t>(dw.desc.elements()) * size_of(p->dtype);
      std::vector<std::byte> reference;
      for (int n : {1, 2, 3, 2}) {
        std::memset(dw.data, 0xff, bytes);  // (thread_bits.hpp: unwritten elements show)
        const convguard::testing::ThreadCount team(n);
        ASSERT_TRUE(s->run(**plan, t.view(), ws).is_ok());
        std::vector<std::byte> got(bytes);
        std::memcpy(got.data(), dw.data, bytes);
        if (reference.empty())
          reference = got;
        else
          EXPECT_EQ(std::memcmp(reference.data(), got.data(), bytes), 0)
              << text << ": different bits with " << n << " threads";
      }
    }
}

// cpu:bwdw_rows:avx512_bf16 on the general random problems (strides, dilation, padding, groups,
// 1D/2D/3D) made dense channels-first bf16.
TEST(Bwdw, RowsBf16VerifiesOnRandomDenseProblems) {
  const Solver* s = find_solver("cpu:bwdw_rows:avx512_bf16");
  ASSERT_NE(s, nullptr);
  const auto run = convguard::testing::verify_on_dense_bf16(*s, Direction::backward_weights, 120);
  if (run.verified == 0 && run.declined.find("CPU") != std::string::npos)
    GTEST_SKIP() << run.declined;
  EXPECT_GE(run.verified, 60) << run.declined;
}

// cpu:bwdw on dense channels-first bf16 widens dy, and a 1x1 layer's x, as it packs each chunk
// (StagingSpec::caller_x, caller_y): its workspace holds no fp32 copy of them. Every verification
// would pass unnoticed if it staged them again.
TEST(Bwdw, WidensBf16WithoutStaging) {
  for (const char* id : {"cpu:bwdw:avx512", "cpu:bwdw:avx2"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr);
    for (const char* text : {"mb8ic64ih28oc64oh28kh1", "mb8ic64ih28oc64oh28kh3ph1"}) {
      auto p = parse_problem(std::string("--dir=BWD_W --dt=bf16 ") + text);
      ASSERT_TRUE(p.is_ok()) << text;
      if (!s->check(*p)) continue;  // this CPU (or CONVGUARD_CPU_ISA) lacks the ISA
      const auto ws = s->workspace_bytes(*p);
      ASSERT_TRUE(ws.is_ok());
      // As much as the fp32 problem's, which reads dy (and a 1x1 layer's x) in place, plus a
      // staged fp32 dW (an fp32 1x1 filter is dW's own layout): no fp32 x or dy beyond that.
      Problem f32 = *p;
      f32.dtype = DType::f32;
      const auto ws32 = s->workspace_bytes(f32);
      ASSERT_TRUE(ws32.is_ok());
      // (+ 64 KiB of slack for slot alignment and overread margins: far below either tensor.)
      const std::int64_t most =
          static_cast<std::int64_t>(*ws32) + w_desc(*p).elements() * 4 + (64 << 10);
      const std::int64_t y = y_desc(*p).elements() * 4;
      EXPECT_LE(static_cast<std::int64_t>(*ws), most)
          << id << " " << text << ": " << *ws << " bytes of workspace, fp32's " << *ws32
          << " (fp32 dy is " << y << ")";
    }
  }
}
