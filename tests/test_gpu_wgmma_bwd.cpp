// gpu:wgmma_implicit_gemm's backward-data with the caller's filter read in place (no flipped copy:
// K % 64 == 0 and C % 8 == 0, the filter tile loaded MN-major; wgmma_implicit_gemm.cu, WgPlan):
// random shapes at the edges of that path (filters 1, 2, 3, 5 and R != S, stride 1, 2 and 3,
// padding beyond R - 1, dx channels that end inside a 16-byte chunk column of the tile and at each
// tile width, a reduction over several dy-channel stages per tap, split reductions, 256-pixel
// tiles), and which shapes take it (no workspace) and which keep the flip; then the plan's wave
// counting, forward and backward-data (128 x 256 tiles, two blocks per SM), the bulk-copy loaders
// and the forward's pixel-wide tiles. Skipped without a Hopper GPU, with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "gpu/gpu.hpp"
#include "gpu_shapes.hpp"

using namespace convguard;
using convguard::testing::verify_on_shapes;

namespace {

// The solver where it runs (an sm_90 GPU and the build's sm_90a code), else null with the reason.
const Solver* wgmma_or_reason(std::string* why) {
  if (gpu::device_count() == 0 || !gpu::open_device(0).is_ok()) {
    *why = "no GPU here: GPU tests skipped";
    return nullptr;
  }
  const Solver* s = find_solver("gpu:wgmma_implicit_gemm");
  if (!s) {
    *why = "no CUDA backend in this build";
    return nullptr;
  }
  const auto probe =
      parse_problem("--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih8oc8oh8kh3ph1");
  if (!probe) {
    *why = probe.status().message();
    return nullptr;
  }
  if (const Status st = s->check(*probe); !st) {
    *why = st.message();
    return nullptr;
  }
  return s;
}

#define REQUIRE_WGMMA_HERE()                                                                \
  std::string why;                                                                          \
  const Solver* wgmma = wgmma_or_reason(&why);                                              \
  if (!wgmma) {                                                                             \
    /* On a Hopper GPU a build without the kernel's sm_90a code is a defect, not a skip. */ \
    if (why.find("holds no sm_90a code") != std::string::npos) FAIL() << why;               \
    GTEST_SKIP() << why;                                                                    \
  }

Problem bwd_data(int n, int c, int k, int h, int w, int r, int s) {
  return convguard::testing::nhwc_problem(Direction::backward_data, DType::bf16, n, c, k, h, w, r,
                                          s);
}

}  // namespace

TEST(Gpu, TensorCoreWgmmaBackwardDataFilterInPlace) {
  REQUIRE_WGMMA_HERE();
  (void)wgmma;
  // (1) Random shapes of the in-place path: K 64..256 (one to four dy-channel stages per tap), C
  // a multiple of 8 up to 320 (tile columns of 64, 128 and 256 and their edges), filters 1, 2, 3,
  // 5 (R != S in half), padding 0..2 at the beginning (beyond R - 1 too) and 0..3 at the end;
  // stride 1 in half the draws, else 2 or 3 in either dimension (phases without taps too); 1D in
  // every seventh; f16 and bf16.
  const int sizes[] = {1, 3, 5, 2};
  EXPECT_GT(verify_on_shapes(
                "gpu:wgmma_implicit_gemm", 120,
                [&](auto pick, int i) {
                  const bool one_d = i % 7 == 3, strided = i % 2 == 1;
                  Problem p = bwd_data(pick(1, 4), 8 * pick(1, 40), 64 * pick(1, 4),
                                       one_d ? 1 : pick(1, 30), pick(1, 30),
                                       one_d ? 1 : sizes[pick(0, 3)], sizes[pick(0, 3)]);
                  p.spatial_dims = one_d ? 1 : 2;
                  p.stride = {1, one_d || !strided ? 1 : pick(1, 3), strided ? pick(2, 3) : 1};
                  p.pad_begin = {0, one_d ? 0 : pick(0, 2), pick(0, 2)};
                  p.pad_end = {0, one_d ? 0 : pick(0, 3), pick(0, 3)};
                  p.dtype = i % 2 ? DType::bf16 : DType::f16;
                  return p;
                }),
            80);
  // (2) Every filter of 1, 3, 5, 7 with padding 0, 1, 2 on odd sizes (M tails), C at a chunk
  // column's and a tile's edges (8, 72, 136, 264), K 64 and 192, stride 1 and 2.
  const int filters[] = {1, 3, 5, 7}, channels[] = {8, 72, 136, 264};
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_implicit_gemm", 96,
                             [&](auto, int i) {
                               Problem p = bwd_data(2, channels[i % 4], i % 8 < 4 ? 64 : 192, 15,
                                                    17, filters[i / 12 % 4], filters[i / 12 % 4]);
                               p.stride = {1, 1 + i / 48, 1 + i / 48};
                               p.pad_begin = p.pad_end = {0, (i / 4) % 3, (i / 4) % 3};
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               return p;
                             }),
            96);
  // (3) Few tiles and a long reduction (3x3 over 512-1024 dy channels at 5x5 to 9x9): split-K's
  // partials, no filter workspace before them.
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_implicit_gemm", 8,
                             [](auto pick, int i) {
                               Problem p = bwd_data(pick(1, 2), 8 * pick(9, 40), 64 * pick(8, 16),
                                                    pick(5, 9), pick(5, 9), 3, 3);
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               return p;
                             }),
            8);
}

// Many tiles: the 128 x 256 (C >= 256) and 256 x 128 tiles of the plan (M = N * H * W), 1x1 and
// 3x3; and ResNet-50 b32's layers whose plans the in-place path changed (WgPlan's tile_for): 128 x
// 256 on 104 and 196 tiles (res5[b-c]_branch2a, res4[b-f]_branch2a), 128 x 128 split in 2 on a
// 32-stage reduction (res5[a-c]_branch2c). Verified by sampling; apart from the shapes above so
// that racecheck can leave them out.
TEST(Gpu, TensorCoreWgmmaBackwardDataFilterInPlaceWideTiles) {
  REQUIRE_WGMMA_HERE();
  (void)wgmma;
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_implicit_gemm", 7,
                             [](auto, int i) {
                               if (i == 4) return bwd_data(32, 2048, 512, 7, 7, 1, 1);
                               if (i == 5) return bwd_data(32, 1024, 256, 14, 14, 1, 1);
                               if (i == 6) return bwd_data(32, 512, 2048, 7, 7, 1, 1);
                               Problem p = i % 2 ? bwd_data(16, 256, 64, 56, 56, 1, 1)
                                                 : bwd_data(32, 136, 128, 56, 56, 1, 1);
                               if (i >= 2) {
                                 p.filter = {1, 3, 3};
                                 p.pad_begin = p.pad_end = {0, 1, 1};
                               }
                               return p;
                             }),
            7);
}

// Which backward-data problems read the filter in place (no workspace when unsplit) and which
// keep the flipped copy in the workspace (C or K not whole chunks of the in-place tile).
TEST(Gpu, TensorCoreWgmmaBackwardDataWorkspace) {
  REQUIRE_WGMMA_HERE();
  // The default plans' workspace: a forced tile plans its own split of the reduction.
  if (std::getenv("CONVGUARD_WGMMA_TILE") || std::getenv("CONVGUARD_WGMMA_SPLIT"))
    GTEST_SKIP() << "CONVGUARD_WGMMA_TILE or _SPLIT forced";
  const std::string nhwc = "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb ";
  for (const auto& [text, in_place] : std::vector<std::pair<std::string, bool>>{
           {"mb32ic256ih14oc256oh14kh3ph1", true},
           {"mb32ic128ih56oc128oh28kh3sh2ph1", true},
           {"mb32ic1024ih14oc256oh14kh1", true},
           {"mb8ic3ih224oc64oh112kh7sh2ph3", false},  // C = 3: ragged dx channels
           {"mb8ic60ih28oc128oh28kh3ph1", false},     // C % 8 != 0
           {"mb8ic64ih28oc96oh28kh3ph1", false}}) {   // K % 64 != 0: a stage spans taps
    const auto p = parse_problem(nhwc + text);
    ASSERT_TRUE(p.is_ok()) << text;
    const auto bytes = wgmma->workspace_bytes(*p);
    ASSERT_TRUE(bytes.is_ok()) << text << ": " << bytes.status().message();
    if (in_place)
      EXPECT_EQ(*bytes, 0u) << text;
    else
      EXPECT_GT(*bytes, 0u) << text;
  }
}

namespace {

// Runs `s` on each problem (sampled host reference: these are large) and
// returns how many verified.
int verify_sampled(const Solver& s, const std::vector<std::string>& texts,
                   const std::string& dtype = "--dt=bf16 ") {
  int verified = 0;
  for (const auto& text : texts) {
    const auto p = parse_problem(dtype + "--stag=axb --wtag=axb --dtag=axb " + text);
    EXPECT_TRUE(p.is_ok()) << text;
    if (!p.is_ok()) continue;
    TrialTensors t(*p);
    fill_inputs(*p, t, 13, FillMode::uniform);
    TrialOptions o;
    o.full_reference_limit = 0;
    const TrialResult r = gpu::run_trial(s, *p, t, o);
    EXPECT_TRUE(r.ran()) << text << ": " << r.status.message();
    EXPECT_TRUE(!r.ran() || (r.verdict && r.verdict->ok))
        << text << ": " << (r.verdict ? r.verdict->message : "no verdict");
    verified += r.ran() && r.verdict && r.verdict->ok;
  }
  return verified;
}

// `s` run twice on the bf16 NHWC problem `text` (testing::two_runs): the outputs must be equal bit
// for bit (fixed orders of sums, no atomics).
void expect_equal_runs(const Solver& s, const std::string& text) {
  const auto p = parse_problem("--dt=bf16 --stag=axb --wtag=axb --dtag=axb " + text);
  ASSERT_TRUE(p.is_ok()) << text;
  const auto out = convguard::testing::two_runs(s, *p);
  ASSERT_EQ(out.size(), 2u) << text;
  EXPECT_TRUE(out[0] == out[1]) << text << ": two runs differ";
}

// What `query` says of gpu:wgmma_implicit_gemm's plan of the bf16 NHWC problem `text`.
template <typename Query>
std::string plan_of(const std::string& text, Query query) {
  const auto p = parse_problem("--dt=bf16 --stag=axb --wtag=axb --dtag=axb " + text);
  EXPECT_TRUE(p.is_ok()) << text;
  return p.is_ok() ? std::string(query(*p)) : std::string();
}
// The kernel it takes (gpu::wgmma_implicit_gemm_kernel: "phased walk", "phased grid", ...).
std::string kernel_of(const std::string& text) {
  return plan_of(text, gpu::wgmma_implicit_gemm_kernel);
}
// Its tiles and split (gpu::wgmma_implicit_gemm_tiles: "128 x 256 tiles, split 5", ...).
std::string tiles_of(const std::string& text) {
  return plan_of(text, gpu::wgmma_implicit_gemm_tiles);
}

// Whether a plan setting for measuring (loader, tile, pixel width, split, the filter flip) is
// forced for the whole run (scripts/gpu_check.sh reruns tests so): then the tests check results,
// not which plan is taken.
bool plan_forced_outside() {
  return std::getenv("CONVGUARD_WGMMA_WS") || std::getenv("CONVGUARD_WGMMA_TILE") ||
         std::getenv("CONVGUARD_WGMMA_PIXELS") || std::getenv("CONVGUARD_WGMMA_SPLIT") ||
         std::getenv("CONVGUARD_WGMMA_BWD_FLIP");
}

// Sets an environment variable for a scope (the plan settings read at each plan), restoring it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* was = std::getenv(name);
    had_ = was != nullptr;
    if (had_) saved_ = was;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, saved_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string saved_;
  bool had_ = false;
};

}  // namespace

// Outputs of an odd channel count from whole-chunk inputs: the two-warpgroup kernel loads by
// cp.async and stores its outputs one by one (WgPlan::ragged without ragged_loads).
// Backward-data to C of 1 to 27 (odd) from K of 64, 72 and 128 dy channels, filters 1 to 7, each
// with stride 1 and 2 in either dimension (phases; strided 1x1 too), padding 0 to 3; forward to K
// odd from C a multiple of 8; then conv1's backward-data (C = 3, 7x7 stride 2) at batch 4 and two
// split reductions (one tile, a long reduction) whose fp32 planes of 7 x 7 x 5 and 7 x 7 x 7
// elements are not whole quads (the reduction's element-wise kernel), verified by sampling.
TEST(Gpu, TensorCoreWgmmaOddOutputChannels) {
  REQUIRE_WGMMA_HERE();
  const int odd[] = {1, 3, 5, 7, 13, 27}, ks[] = {64, 72, 128}, filters[] = {1, 3, 5, 7};
  int drawn = 0;
  const int verified = verify_on_shapes("gpu:wgmma_implicit_gemm", 32, [&](auto pick, int i) {
    const int f = filters[i % 4];
    Problem p = bwd_data(pick(1, 3), odd[i % 6], ks[i / 6 % 3], pick(5, 30), pick(5, 30), f, f);
    p.stride = {1, 1 + i / 4 % 2, 1 + i / 8 % 2};
    p.pad_begin = {0, pick(0, f / 2), pick(0, f / 2)};
    p.pad_end = {0, pick(0, 3), pick(0, 3)};
    p.dtype = i % 3 ? DType::bf16 : DType::f16;
    drawn += validate(p).is_ok();
    return p;
  });
  EXPECT_EQ(verified, drawn);
  EXPECT_GE(drawn, 24);
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_implicit_gemm", 12,
                             [&](auto pick, int i) {
                               Problem p = bwd_data(pick(1, 3), 8 * pick(1, 20), odd[i % 6],
                                                    pick(5, 30), pick(5, 30), 3, 3);
                               p.direction = Direction::forward;
                               p.stride = {1, 1 + i % 2, 1 + i % 2};
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               return p;
                             }),
            12);
  EXPECT_EQ(
      verify_sampled(*wgmma, {"--dir=BWD_D mb4ic3ih224oc64oh112kh7sh2ph3",
                              "--dir=BWD_D mb1ic5ih7oc1024oh7kh3ph1", "mb1ic1024ih7oc7oh7kh3ph1"}),
      3);
}

// The plan's wave counting (wgmma_tiles.cuh; on an H100's 132 SMs): forward 1x1 layers at the
// edge of the 128 x 256 rule (66 pixel tiles x 512 channels: 132 tiles of 128 x 256 in one wave
// against 264 of 128 x 128 in two, so 128 x 256; 67 x 512: 134 against 268, 2 waves against 3,
// so 128 x 128; ResNet-50's res5 1x1 layers of 2048 channels, 104 against 208), and
// backward-data's two blocks per SM (128 x 128 tiles of 3 stages: at least 4 x 132 blocks of at
// most 8 stages): stride-2 3x3 layers of 16 x 16-pixel phases, 65 images (520 blocks: one per
// SM), 66 (528: two) and 66 with 192 dy channels (12 stages: one), with the grid forced
// (CONVGUARD_WGMMA_PHASED=0: by default they take the phased bulk-copy walk).
// ResNet-50's res3a_branch2b and res3a_branch1 (two per SM) are in Gpu.LargeLayersVerifyBySampling.
TEST(Gpu, TensorCoreWgmmaWaveCounting) {
  REQUIRE_WGMMA_HERE();
  EXPECT_EQ(verify_sampled(*wgmma, {"mb33ic128ih16oc512oh16kh1", "mb134ic128ih8oc512oh8kh1",
                                    "mb32ic512ih7oc2048oh7kh1", "mb32ic1024ih14oc2048oh7kh1sh2"}),
            4);
  const ScopedEnv grid("CONVGUARD_WGMMA_PHASED", "0");  // the two-warpgroup phased grid
  const std::vector<std::string> strided = {"--dir=BWD_D mb65ic128ih32oc128oh16kh3sh2ph1",
                                            "--dir=BWD_D mb66ic128ih32oc128oh16kh3sh2ph1",
                                            "--dir=BWD_D mb66ic128ih32oc192oh16kh3sh2ph1"};
  for (const auto& text : strided) EXPECT_EQ(kernel_of(text), "phased grid") << text;
  EXPECT_EQ(verify_sampled(*wgmma, strided), 3);
}

// Two blocks per SM changes no bit from run to run (each output written once, by one block): the
// two-warpgroup kernel's phased grid, forced (CONVGUARD_WGMMA_PHASED=0; by default this layer takes
// the phased bulk-copy walk, which TensorCoreWgmmaBulkCopyBackwardDataStrided checks).
TEST(Gpu, TensorCoreWgmmaTwoPerSmIsDeterministic) {
  REQUIRE_WGMMA_HERE();
  const ScopedEnv grid("CONVGUARD_WGMMA_PHASED", "0");
  EXPECT_EQ(kernel_of("--dir=BWD_D mb66ic128ih32oc128oh16kh3sh2ph1"), "phased grid");
  expect_equal_runs(*wgmma, "--dir=BWD_D mb66ic128ih32oc128oh16kh3sh2ph1");
}

// gpu:wgmma_bwd_weights' split reductions as clusters (cluster_epilogue in
// wgmma_bwd_weights_common.cuh): ResNet-50 b32 layers that took each form on an H100's 132 SMs
// with 128-wide tiles (CONVGUARD_WGMMA_BWDW_PLAN=1 prints them; since 2026-11-29 the 2D ones take
// the bulk-copy kernel, some with 192- or 256-wide tiles and other split counts, and
// scripts/gpu_check.sh reruns this with the cp.async kernel and each width forced): res2's 1x1 64
// -> 64 and 64 -> 256 keep a plane a split (half-empty tiles: 131 and 66 planes), res3's 3x3
// clusters of 2 (9 tiles x 14 splits, 7 planes), res4's 3x3 clusters of 3 (36 x 3, dw directly:
// rows 0-41, 42-84, 85-127 of a tile), res4a_branch1 (stride 2) clusters of 2 (32 x 4, 2 planes),
// res5's 1x1 2048 -> 512 clusters of 2 (64 x 2, dw directly), res5's 3x3 unsplit (144 tiles); then
// K of 200 and R*S*C of 360 (tiles that end inside, rows and columns past dw skipped; 6 x 22 in
// clusters of 2) and a 3D layer in clusters of 2 (14 x 8, 4 planes). The random shape tests take
// clusters too, and scripts/gpu_check.sh reruns these tests with each cluster size forced
// (CONVGUARD_WGMMA_BWDW_CLUSTER=N: clusters of 3 with planes among them); two runs of the clusters
// of 2 and 3 must be equal bit for bit (fixed orders of sums, no atomics).
TEST(Gpu, TensorCoreWgmmaBackwardWeightsClusters) {
  REQUIRE_WGMMA_HERE();
  (void)wgmma;
  const Solver* bwdw = find_solver("gpu:wgmma_bwd_weights");
  ASSERT_NE(bwdw, nullptr);
  const std::vector<std::string> layers = {
      "--dir=BWD_W mb32ic64ih56oc64oh56kh1",
      "--dir=BWD_W mb32ic64ih56oc256oh56kh1",
      "--dir=BWD_W mb32ic128ih28oc128oh28kh3ph1",
      "--dir=BWD_W mb32ic256ih14oc256oh14kh3ph1",
      "--dir=BWD_W mb32ic512ih28oc1024oh14kh1sh2",
      "--dir=BWD_W mb32ic2048ih7oc512oh7kh1",
      "--dir=BWD_W mb32ic512ih7oc512oh7kh3ph1",
      "--dir=BWD_W mb16ic40ih30oc200oh30kh3ph1",
      "--dir=BWD_W mb4ic64id8ih14iw14oc128od8oh14ow14kd3kh3kw3pd1ph1pw1"};
  EXPECT_EQ(verify_sampled(*bwdw, layers), static_cast<int>(layers.size()));
  for (const char* text : {"mb32ic128ih28oc128oh28kh3ph1", "mb32ic256ih14oc256oh14kh3ph1"})
    expect_equal_runs(*bwdw, std::string("--dir=BWD_W ") + text);
}

// gpu:wgmma_bwd_weights' bulk-copy loader (wgmma_bwd_weights_tma.cuh: 2D, C a multiple of 64),
// random shapes at its edges, full fp64 reference, each of which must take that loader: K of 8,
// 64, 72, 136 and 200 (a tile's second half of rows empty, whole, partial; a second tile row),
// C of 64 (each half of a tile's columns another tap), 128 and 192 (R*S*C ending inside a tile:
// its second half not loaded), filters 1, 2, 3, 5 and 7 and R != S, stride 1-3, dilation 1-3,
// asymmetric padding 0-3, odd sizes (pixel counts off the 64-pixel stage: the last stage's tail
// zero-filled by both copies), batch 1-4, 1D. Then reductions long enough to split (planes where K
// is 64, clusters where K is 128) and two runs of a clustered plan, equal bit for bit.
// scripts/gpu_check.sh reruns this and the cluster test with the loader forced
// (CONVGUARD_WGMMA_BWDW_TMA=0: cp.async everywhere, which this test then expects; =1: bulk copies
// on the 32-pixel plans too) and with each tile width forced (CONVGUARD_WGMMA_BWDW_BN=128, 192,
// 256: every random shape here through each).
TEST(Gpu, TensorCoreWgmmaBackwardWeightsBulkCopies) {
  REQUIRE_WGMMA_HERE();
  (void)wgmma;
  const char* forced = std::getenv("CONVGUARD_WGMMA_BWDW_TMA");
  const std::string_view expected =
      forced && std::string_view(forced) == "0" ? "cp.async" : "bulk copies";
  const int ks[] = {8, 64, 72, 136, 200}, cs[] = {64, 128, 192}, filters[] = {1, 2, 3, 5, 7};
  int drawn = 0;
  const int verified = verify_on_shapes("gpu:wgmma_bwd_weights", 40, [&](auto pick, int i) {
    Problem p;
    const bool one_d = i % 10 == 9;
    p.spatial_dims = one_d ? 1 : 2;
    p.n = 1 + i % 4;
    p.k = ks[i % 5];
    p.c = cs[i / 5 % 3];
    // (5x5 in place of 7x7 over 192 channels: with K of 200 its 148 tiles of 128 columns, more
    // than an H200's SMs, keep the cp.async kernel's 32-pixel stages when 128 is forced.) The
    // expectations assume an H100/H200's 132 SMs: on a Hopper part with far fewer, some of
    // these shapes would plan 32-pixel stages.
    const int f = p.c == 192 && i / 3 % 5 == 4 ? 5 : filters[i / 3 % 5];
    p.filter = {1, one_d ? 1 : f, i % 6 == 1 ? (f == 1 ? 3 : 1) : f};
    p.input = {1, one_d ? 1 : pick(5, 20), pick(5, 24)};
    p.stride = {1, one_d ? 1 : 1 + i % 3, 1 + i / 2 % 3};
    p.dilation = {1, one_d || i % 4 != 3 ? 1 : pick(2, 3), i % 7 == 5 ? pick(2, 3) : 1};
    p.pad_begin = {0, one_d ? 0 : pick(0, 3), pick(0, 3)};
    p.pad_end = {0, one_d ? 0 : pick(0, 3), pick(0, 3)};
    p.direction = Direction::backward_weights;
    p.dtype = i % 2 ? DType::bf16 : DType::f16;
    p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
    if (validate(p).is_ok()) {
      ++drawn;
      EXPECT_EQ(gpu::wgmma_bwd_weights_loader(p), expected) << to_canonical(p);
    }
    return p;
  });
  EXPECT_EQ(verified, drawn);
  EXPECT_GE(drawn, 30);
  const Solver* bwdw = find_solver("gpu:wgmma_bwd_weights");
  ASSERT_NE(bwdw, nullptr);
  // Long reductions; 1x1 layers (pixel counts off the stage, K and C tails; one padded at the
  // end, whose output grid is not x's); 136 tiles of 128 columns, 96 of 192 on an H200 (192-wide
  // tiles, the last of them one 64-wide part, K ending inside the eighth row of tiles).
  const std::vector<std::string> fixed = {
      "--dir=BWD_W mb8ic64ih40oc64oh40kh3ph1",  "--dir=BWD_W mb8ic128ih38oc128oh19kh3sh2ph1",
      "--dir=BWD_W mb6ic64ih33oc200oh33kh5ph2", "--dir=BWD_W mb3ic64ih9iw13oc72oh9ow13kh1kw1",
      "--dir=BWD_W mb5ic192ih11oc8oh11kh1",     "--dir=BWD_W mb2ic128ih8oc128oh9kh1",
      "--dir=BWD_W mb2ic2176ih5oc1000oh5kh1"};
  // (The last takes the bulk copies for their 192-wide tiles: with 128 forced it keeps the
  // cp.async kernel's 32-pixel stages.)
  const char* columns = std::getenv("CONVGUARD_WGMMA_BWDW_BN");
  const bool narrow = columns && std::string_view(columns) == "128";
  for (const auto& text : fixed) {
    const auto p = parse_problem("--dt=bf16 --stag=axb --wtag=axb --dtag=axb " + text);
    ASSERT_TRUE(p.is_ok()) << text;
    EXPECT_EQ(gpu::wgmma_bwd_weights_loader(*p),
              narrow && &text == &fixed.back() ? "cp.async" : expected)
        << text;
  }
  EXPECT_EQ(verify_sampled(*bwdw, fixed), static_cast<int>(fixed.size()));
  expect_equal_runs(*bwdw, "--dir=BWD_W mb32ic128ih28oc128oh28kh3ph1");
}

// The bulk-copy (TMA) loaders (wgmma_ws_forward.cuh, kTma; tma_ws_for in wgmma_tiles.cuh picks
// them for problems of taps of whole stage rows): ResNet-50 b32 forward layers that take each form
// (128 x 64 tiles a tile per block: res2a_branch2b, res5[b-c]_branch2a; 128 x 128 a tile per
// block: the 3x3 layers, res5's split in 2; persistent: the 1x1 layers, res3[a-d]_branch2c in place
// of 128 x 256 tiles), the stride-2 layers (the im2col walk's traversal stride), and small ones at
// the edges: M ending inside a tile (3 images of 8 x 8), padding with stride on odd sizes,
// dilation 2, a 5x5 filter without padding, K of 200 (a second, partial tile column) and of 100
// in a 3x3 layer (not whole 16-byte chunks: the epilogue from the fragments); 1x1 layers at stride
// 1 read x by tiled copies (WgArgs::plain_x), except where the padding at the end makes the output
// grid another than x's (14 -> 13, 8 -> 9: im2col copies). The random shape tests run through both
// forms with CONVGUARD_WGMMA_WS=4 and 5 (scripts/gpu_check.sh).
TEST(Gpu, TensorCoreWgmmaBulkCopyLoads) {
  REQUIRE_WGMMA_HERE();
  const std::vector<std::string> layers = {
      "mb32ic64ih56oc64oh56kh3ph1",    "mb32ic2048ih7oc512oh7kh1",
      "mb32ic128ih28oc128oh28kh3ph1",  "mb32ic256ih14oc256oh14kh3ph1",
      "mb32ic512ih7oc512oh7kh3ph1",    "mb32ic256ih14oc1024oh14kh1",
      "mb32ic128ih28oc512oh28kh1",     "mb32ic128ih56oc128oh28kh3sh2ph1",
      "mb32ic512ih28oc1024oh14kh1sh2", "mb3ic64ih15oc64oh8kh3sh2ph1",
      "mb2ic128ih20oc128oh16kh3dh1",   "mb1ic64ih20oc64oh16kh5",
      "mb2ic128ih9oc200oh9kh3ph1",     "mb2ic64ih9oc100oh9kh3ph1",
      "mb32ic64ih14oc256oh13kh1",      "mb2ic64ih8oc128oh9kh1"};
  EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
  // f16 too (the im2col map's element type), and TF32 (f32 stages of 32 channels; res4's 3x3,
  // res3a_branch2a's 256 x 128 tiles become 128 x 128, and C = 96, whole stage rows, in a 5x5
  // filter at stride 2 over an M that ends inside a tile, split in 2).
  EXPECT_EQ(verify_sampled(*wgmma, {"mb32ic256ih14oc256oh14kh3ph1", "mb3ic64ih15oc64oh8kh3sh2ph1"},
                           "--dt=f16 "),
            2);
  const Solver* tf32 = find_solver("gpu:wgmma_implicit_gemm:tf32");
  ASSERT_NE(tf32, nullptr);
  EXPECT_EQ(verify_sampled(*tf32,
                           {"mb32ic256ih14oc256oh14kh3ph1", "mb32ic256ih56oc128oh56kh1",
                            "mb3ic96ih15oc96oh8kh5sh2ph2"},
                           "--dt=f32 "),
            3);
}

// ... and on stride-1 backward-data reading the filter in place (B as 64 x 64 MN-major atoms
// copied from the caller's KRSC filter at the flipped tap): ResNet-50 b32 layers taking each form
// (the 3x3 res3 and res2 layers a tile per block at 128 x 128 and 128 x 64, the 1x1 layers of
// short reductions persistent, res2[b-c]_branch2a in place of 128 x 256 tiles, res5's 3x3 split
// in 2), and small ones at the edges: dx channels (the GEMM's N) of 200 in 128 x 64 tiles (atoms
// past C), padding 3 of a 3x3 filter (the flipped problem's padding -1: the im2col box's lower
// corner +1), a 5x5 filter with 192 dy channels split in 2. The random backward-data shape tests
// run through both forms with CONVGUARD_WGMMA_WS=4 and 5 (scripts/gpu_check.sh).
TEST(Gpu, TensorCoreWgmmaBulkCopyBackwardData) {
  REQUIRE_WGMMA_HERE();
  const std::vector<std::string> layers = {
      "--dir=BWD_D mb32ic128ih28oc128oh28kh3ph1", "--dir=BWD_D mb32ic64ih56oc64oh56kh3ph1",
      "--dir=BWD_D mb32ic1024ih14oc256oh14kh1",   "--dir=BWD_D mb32ic256ih56oc64oh56kh1",
      "--dir=BWD_D mb32ic512ih7oc512oh7kh3ph1",   "--dir=BWD_D mb2ic200ih9oc64oh9kh3ph1",
      "--dir=BWD_D mb2ic64ih10oc64oh14kh3ph3",    "--dir=BWD_D mb2ic72ih11oc192oh11kh5ph2"};
  EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
}

// The persistent bulk-copy kernel's epilogue by bulk tensor stores (store_bulk in
// wgmma_ws_forward.cuh; WgArgs::bulk_store), on layers whose plans take that kernel: ResNet-50
// b32's res2a_branch2a (1 stage, 128 x 64 tiles), res4[a-f]_branch2c (4 stages), res3[a-d]_branch2c
// and res2a_branch2c (128 x 256 tiles of 2 and 1 stages: four boxes a tile) and stride-1
// backward-data's res4[b-f]_branch2a (the filter in place); and at the edges: M ending inside a
// tile with 200 channels (the last box clipped to 8 of its 64 columns), 72 channels, and 100 (not
// whole 16-byte chunks: the fragments' stores, no map). Then f16, two runs equal bit for bit, and
// everything with the bulk stores off (CONVGUARD_WGMMA_BULK_STORE=0, read at each plan:
// store_staged). The plan keeps them off for store-bound tiles many to an SM: b256's
// res2a_branch2c (planned, not run). Under a forced loader or tile (scripts/gpu_check.sh) the
// plans may differ: the kernels are asserted only as planned.
TEST(Gpu, TensorCoreWgmmaBulkCopyStores) {
  REQUIRE_WGMMA_HERE();
  const bool outer = plan_forced_outside() || std::getenv("CONVGUARD_WGMMA_BULK_STORE");
  const std::vector<std::string> layers = {"mb32ic64ih56oc64oh56kh1",
                                           "mb32ic256ih14oc1024oh14kh1",
                                           "mb32ic128ih28oc512oh28kh1",
                                           "mb32ic64ih56oc256oh56kh1",
                                           "--dir=BWD_D mb32ic1024ih14oc256oh14kh1",
                                           "mb3ic64ih15oc200oh15kh1",
                                           "mb2ic128ih9oc72oh9kh1",
                                           "mb3ic64ih15oc100oh15kh1"};
  constexpr const char* kBulk = "persistent bulk copies";
  constexpr const char* kThreads = "persistent bulk copies, thread stores";
  if (!outer) {
    for (const auto& text : layers)
      EXPECT_EQ(kernel_of(text), text.find("oc100") == std::string::npos ? kBulk : kThreads)
          << text;
    EXPECT_EQ(kernel_of("mb256ic64ih56oc256oh56kh1"), kThreads);
  }
  EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
  EXPECT_EQ(verify_sampled(*wgmma, {"mb3ic64ih15oc200oh15kh1"}, "--dt=f16 "), 1);
  expect_equal_runs(*wgmma, "mb3ic64ih15oc200oh15kh1");
  const ScopedEnv staged("CONVGUARD_WGMMA_BULK_STORE", "0");
  if (!outer) {
    for (const auto& text : layers) EXPECT_EQ(kernel_of(text), kThreads) << text;
  }
  EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
}

// ... and on strided backward-data: one persistent walk over every stride phase's tiles, the
// longest reductions first, each phase's dy through its own im2col map, the tiles of phases
// without taps stored as zeros by the producer's idle warps (WgPlan::phased_bulk_fits: 16-bit 2D,
// the filter read in place, at most 4 phases). ResNet-50 b32's six stride-2 layers (the 3x3
// res3a/res4a/res5a_branch2b: phases of 4, 2, 2 and 1 taps; the 1x1 res3a/res4a/res5a_branch1:
// three phases without taps), sampled, as planned (all six take the walk) and then with the walk
// forced (CONVGUARD_WGMMA_PHASED=1, read at each plan) on them and on the edges: odd dx sizes
// (phases of unequal pixel counts, M ending inside a tile), a 5x5 filter (phases of 9, 6, 6 and 4
// taps) with 192 dy channels (3 stages a tap) and 72 dx channels (the second atom past C), 200 dx
// channels with padding 0 (the phases' padding negative: dy rows skipped), stride 2 along W only
// (two phases), 1x1 layers with tails (phases of zeros narrower and shorter than store_zeros' rows
// a pass, six at 128 x 128 tiles and twelve at 128 x 64: one pixel wide, two and three high, over
// nine images, at 64 and 128 dx channels; 200 dx channels: a zero tile's chunks past C), f16; and
// two runs equal bit for bit. The two-warpgroup kernel's phased grid keeps its coverage with
// CONVGUARD_WGMMA_WS=0 (scripts/gpu_check.sh).
TEST(Gpu, TensorCoreWgmmaBulkCopyBackwardDataStrided) {
  REQUIRE_WGMMA_HERE();
  const bool outer = std::getenv("CONVGUARD_WGMMA_PHASED") || std::getenv("CONVGUARD_WGMMA_WS");
  const std::vector<std::string> layers = {
      "--dir=BWD_D mb32ic128ih56oc128oh28kh3sh2ph1", "--dir=BWD_D mb32ic256ih28oc256oh14kh3sh2ph1",
      "--dir=BWD_D mb32ic512ih14oc512oh7kh3sh2ph1",  "--dir=BWD_D mb32ic256ih56oc512oh28kh1sh2",
      "--dir=BWD_D mb32ic512ih28oc1024oh14kh1sh2",   "--dir=BWD_D mb32ic1024ih14oc2048oh7kh1sh2"};
  if (!outer) {  // as planned
    for (const auto& text : layers) EXPECT_EQ(kernel_of(text), "phased walk") << text;
    EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
  }
  const ScopedEnv walk("CONVGUARD_WGMMA_PHASED", "1");
  std::vector<std::string> forced = layers;
  for (const char* edge :
       {"--dir=BWD_D mb3ic64ih15oc64oh8kh3sh2ph1", "--dir=BWD_D mb2ic72ih13oc192oh7kh5sh2ph2",
        "--dir=BWD_D mb2ic200ih9oc64oh4kh3sh2ph0",
        "--dir=BWD_D mb2ic64ih12iw13oc128oh12ow7kh3kw3sh1sw2ph1pw1",
        "--dir=BWD_D mb5ic64ih7oc64oh4kh1sh2", "--dir=BWD_D mb9ic64ih5iw2oc64oh3ow1kh1kw1sh2sw2",
        "--dir=BWD_D mb9ic128ih5iw2oc64oh3ow1kh1kw1sh2sw2",
        "--dir=BWD_D mb3ic200ih13oc64oh7kh1sh2"})
    forced.emplace_back(edge);
  for (const auto& text : forced) EXPECT_EQ(kernel_of(text), "phased walk") << text;
  EXPECT_EQ(verify_sampled(*wgmma, forced), static_cast<int>(forced.size()));
  EXPECT_EQ(verify_sampled(*wgmma, {"--dir=BWD_D mb3ic64ih15oc64oh8kh3sh2ph1"}, "--dt=f16 "), 1);
  expect_equal_runs(*wgmma, "--dir=BWD_D mb66ic128ih32oc128oh16kh3sh2ph1");
  // Stride 3 (3 phases along H) is not the walk's, even forced: the grid.
  EXPECT_EQ(kernel_of("--dir=BWD_D mb2ic64ih15oc64oh5kh3sh3ph1"), "phased grid");
}

// The pixel-wide tiles (wgmma_pixel_wide.cuh: 128 output channels x 64 to 256 pixels, the GEMM's
// operands in swapped roles): the ResNet-50 b32 layers whose plans take them on an H200's 132 SMs
// (pixel_wide_for: res4[b-f]_branch2a and the res4 3x3 layers as 96-pixel tiles, the res3 3x3
// layers as 192, res3[b-d]_branch2a no longer since session 22: 128 x 64 persistent tiles,
// narrow_pointwise, here verified all the same; backward-data's 3x3 layers and res4[a-f]_branch2c,
// the filter read in place as MN-major A), then each width forced (CONVGUARD_WGMMA_PIXELS, read at
// each plan) on small layers at the edges: pixels ending inside a tile over images of odd sizes, K
// = 136 (a second channel tile of 8 filter rows: the copy past K zero-filled, the chunks past K not
// stored) and K = 64 (half a tile), stride 2 with padding, dilation 2, a 5x5 filter, C = 192 (three
// stage rows a tap), f16; K = 100 (not whole chunks) keeps the other kernels even when forced; 1x1
// layers padded at the end only (the output grid not x's: im2col copies, not tiled ones); and
// backward-data in place: 200 dx channels (the second tile's second atom reads the next tap's
// channels, never stored), padding 3 of a 3x3 filter (flipped: -1), a 5x5 filter with 192 dy
// channels and 72 dx channels.
TEST(Gpu, TensorCoreWgmmaPixelWideTiles) {
  REQUIRE_WGMMA_HERE();
  const char* outer = std::getenv("CONVGUARD_WGMMA_PIXELS");
  const std::vector<std::string> layers = {"mb32ic1024ih14oc256oh14kh1",
                                           "mb32ic256ih14oc256oh14kh3ph1",
                                           "mb32ic512ih28oc128oh28kh1",
                                           "mb32ic128ih28oc128oh28kh3ph1",
                                           "mb32ic128ih56oc128oh28kh3sh2ph1",
                                           "mb32ic256ih28oc256oh14kh3sh2ph1",
                                           "--dir=BWD_D mb32ic256ih14oc256oh14kh3ph1",
                                           "--dir=BWD_D mb32ic128ih28oc128oh28kh3ph1",
                                           "--dir=BWD_D mb32ic256ih14oc1024oh14kh1"};
  if (!outer) {
    EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
  }
  const std::vector<std::string> edges = {"mb3ic64ih15oc136oh8kh3sh2ph1",
                                          "mb2ic128ih20oc64oh16kh3dh1",
                                          "mb1ic64ih20oc128oh16kh5",
                                          "mb2ic192ih9oc256oh9kh3ph1",
                                          "mb5ic64ih7oc128oh7kh1",
                                          "mb2ic64ih9oc100oh9kh3ph1",
                                          "--dir=BWD_D mb2ic200ih9oc64oh9kh3ph1",
                                          "--dir=BWD_D mb2ic64ih10oc64oh14kh3ph3",
                                          "--dir=BWD_D mb2ic72ih11oc192oh11kh5ph2",
                                          "mb2ic64ih8oc128oh9kh1",
                                          "mb3ic64ih14oc136oh13kh1"};
  for (const char* width : {"64", "96", "128", "192", "256"}) {
    SCOPED_TRACE(std::string("CONVGUARD_WGMMA_PIXELS=") + width);
    const ScopedEnv forced("CONVGUARD_WGMMA_PIXELS", width);
    EXPECT_EQ(verify_sampled(*wgmma, edges), static_cast<int>(edges.size()));
    EXPECT_EQ(verify_sampled(*wgmma, {"mb3ic64ih15oc136oh8kh3sh2ph1"}, "--dt=f16 "), 1);
  }
}

// Few wide tiles over a long reduction, split to fill the SMs (wide_fill_split in wgmma_tiles.cuh),
// and pixel-wide tiles on a tie with a tile-per-block plan of smaller tiles, or of tiles no larger
// on the two-warpgroup kernel (pixel_wide_for's tie_from_area), as planned on 132 SMs (an H200's or
// H100 SXM's; the plans depend on the SM count, so elsewhere only the verification runs): ResNet-50
// b32's res5 3x3 layers, forward and backward-data, as 26 tiles of 128 x 256 split in 5 (the last
// split 12 of 72 stages); its 32-stage layers kept as before (forward pixel-wide, backward-data 128
// x 128 split in 2); b256's res3 3x3 layers as 256-pixel tiles (forward; backward-data's stride-1
// one, whose plan was 256 x 128 on the two-warpgroup kernel) and res4a_branch2b's 128 x 256 tiles
// kept; forward b32 res3[b-d]_branch2a and b256 res3a_branch2a (1x1, 128 channels) as persistent
// 128 x 64 tiles. Then, split or not by the plan on any GPU, sampled against the reference: those
// layers, a batch of 2 (98 pixels: one M tile, ending inside it; 2 wide tiles split in 6 where the
// SMs allow), K = 320 (the second wide tile 64 channels wide), C = 448 (63 stages: the last split
// shorter), f16; and two runs equal bit for bit (the splits' partial sums added in a fixed order).
TEST(Gpu, TensorCoreWgmmaWideSplitsAndPixelTies) {
  REQUIRE_WGMMA_HERE();
  const auto device = gpu::open_device(0);
  const bool planned_here =
      !plan_forced_outside() && device.is_ok() && device->multiprocessors == 132;
  const std::vector<std::string> split = {"mb32ic512ih7oc512oh7kh3ph1",
                                          "mb32ic512ih14oc512oh7kh3sh2ph1",
                                          "--dir=BWD_D mb32ic512ih7oc512oh7kh3ph1"};
  const std::vector<std::string> narrow = {"mb32ic512ih28oc128oh28kh1",
                                           "mb256ic256ih56oc128oh56kh1"};
  const std::vector<std::string> pixels = {"mb256ic128ih28oc128oh28kh3ph1",
                                           "mb256ic128ih56oc128oh28kh3sh2ph1",
                                           "--dir=BWD_D mb256ic128ih28oc128oh28kh3ph1"};
  if (planned_here) {
    for (const auto& text : split) {
      EXPECT_EQ(tiles_of(text), "128 x 256 tiles, split 5") << text;
      EXPECT_EQ(kernel_of(text), "bulk copies") << text;
    }
    for (const auto& text : pixels) EXPECT_EQ(tiles_of(text), "pixel-wide, 256 pixels") << text;
    EXPECT_EQ(tiles_of("mb32ic2048ih7oc512oh7kh1"), "pixel-wide, 96 pixels");
    EXPECT_EQ(tiles_of("--dir=BWD_D mb32ic512ih7oc2048oh7kh1"), "128 x 128 tiles, split 2");
    EXPECT_EQ(tiles_of("mb256ic256ih28oc256oh14kh3sh2ph1"), "128 x 256 tiles, split 1");
    EXPECT_EQ(tiles_of("mb2ic512ih7oc512oh7kh3ph1"), "128 x 256 tiles, split 6");
    // 36 stages, below long_reduction: tile_for's 128 x 64, then 96-pixel tiles, as before.
    EXPECT_EQ(tiles_of("mb16ic256ih14oc256oh14kh3ph1"), "pixel-wide, 96 pixels");
    // Forward 1x1 layers of 128 channels over at least two waves of 128 x 64 tiles
    // (narrow_pointwise): those tiles, persistent, in place of 192-pixel and 128 x 128 tiles.
    for (const auto& text : narrow) {
      EXPECT_EQ(tiles_of(text), "128 x 64 tiles, split 1") << text;
      EXPECT_EQ(kernel_of(text), "persistent bulk copies") << text;
    }
  }
  EXPECT_EQ(verify_sampled(*wgmma, split), static_cast<int>(split.size()));
  EXPECT_EQ(verify_sampled(*wgmma, narrow), static_cast<int>(narrow.size()));
  EXPECT_EQ(verify_sampled(*wgmma, pixels), static_cast<int>(pixels.size()));
  const std::vector<std::string> edges = {"mb2ic512ih7oc512oh7kh3ph1", "mb3ic512ih9oc320oh9kh3ph1",
                                          "mb2ic448ih7oc512oh7kh3ph1",
                                          "--dir=BWD_D mb2ic320ih7oc512oh7kh3ph1"};
  EXPECT_EQ(verify_sampled(*wgmma, edges), static_cast<int>(edges.size()));
  EXPECT_EQ(verify_sampled(*wgmma, {"mb2ic512ih7oc512oh7kh3ph1"}, "--dt=f16 "), 1);
  expect_equal_runs(*wgmma, "mb32ic512ih7oc512oh7kh3ph1");
}

// The bulk-copy kernel's splits as one cluster along z, their sums added through distributed
// shared memory in split order (WgPlan::split_clusters, clusters of 2 unless raised):
// backward-data res5[a-c]_branch2c as planned (128 x 128, split 2); with the largest cluster 8
// (CONVGUARD_WGMMA_SPLIT_CLUSTER, read at each plan) the 128 x 256 plans split 5 and 6 as clusters
// too, on M and K tails (98 and 243 pixels, K of 320: a tile past K), bf16 and f16, sampled; the
// fp32 planes (=0) on the same; two runs equal bit for bit; then tiles, splits and the loaders
// forced per scope (CONVGUARD_WGMMA_TILE, _SPLIT, _WS: read at each plan since session 35) to
// splits of 3 and 4 as clusters and as planes, and to none. Forced on every shape test:
// scripts/gpu_check.sh.
TEST(Gpu, TensorCoreWgmmaSplitClusters) {
  REQUIRE_WGMMA_HERE();
  const auto device = gpu::open_device(0);
  const bool planned_here = !plan_forced_outside() &&
                            !std::getenv("CONVGUARD_WGMMA_SPLIT_CLUSTER") && device.is_ok() &&
                            device->multiprocessors == 132;
  constexpr const char* kClusters = "bulk copies, splits in clusters";
  const std::string r5c = "--dir=BWD_D mb32ic512ih7oc2048oh7kh1";
  const std::vector<std::string> wide = {"mb32ic512ih7oc512oh7kh3ph1", "mb2ic512ih7oc512oh7kh3ph1",
                                         "mb3ic512ih9oc320oh9kh3ph1",
                                         "--dir=BWD_D mb2ic320ih7oc512oh7kh3ph1"};
  std::vector<std::string> layers = wide;
  layers.push_back(r5c);
  if (planned_here) {
    EXPECT_EQ(tiles_of(r5c), "128 x 128 tiles, split 2");
    EXPECT_EQ(kernel_of(r5c), kClusters);
    for (const auto& text : wide) EXPECT_EQ(kernel_of(text), "bulk copies") << tiles_of(text);
  }
  EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
  {
    const ScopedEnv largest("CONVGUARD_WGMMA_SPLIT_CLUSTER", "8");
    if (planned_here) {
      for (const auto& text : layers) EXPECT_EQ(kernel_of(text), kClusters) << tiles_of(text);
    }
    EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
    EXPECT_EQ(verify_sampled(*wgmma, {"mb3ic512ih9oc320oh9kh3ph1"}, "--dt=f16 "), 1);
    expect_equal_runs(*wgmma, "mb3ic512ih9oc320oh9kh3ph1");
    expect_equal_runs(*wgmma, r5c);
  }
  {
    const ScopedEnv planes("CONVGUARD_WGMMA_SPLIT_CLUSTER", "0");
    if (planned_here) {
      for (const auto& text : layers) EXPECT_EQ(kernel_of(text), "bulk copies") << tiles_of(text);
    }
    EXPECT_EQ(verify_sampled(*wgmma, layers), static_cast<int>(layers.size()));
  }
  // Forced per scope: the bulk-copy kernel at 128 x 128 and 128 x 64, split 3 and 4 (clusters of
  // 3 and 4 with the largest cluster raised; fp32 planes without), and split 1 (no split at all).
  if (plan_forced_outside() || std::getenv("CONVGUARD_WGMMA_SPLIT_CLUSTER")) return;
  const ScopedEnv ws("CONVGUARD_WGMMA_WS", "4");
  const std::vector<std::string> forced = {r5c, "mb3ic512ih9oc320oh9kh3ph1",
                                           "--dir=BWD_D mb2ic320ih7oc512oh7kh3ph1"};
  for (const char* tile : {"128x128", "128x64"}) {
    const ScopedEnv tiles("CONVGUARD_WGMMA_TILE", tile);
    for (const char* split : {"3", "4"}) {
      const ScopedEnv splits("CONVGUARD_WGMMA_SPLIT", split);
      const std::string planned =
          std::string(tile[4] == '1' ? "128 x 128" : "128 x 64") + " tiles, split " + split;
      for (const auto& text : forced) EXPECT_EQ(tiles_of(text), planned) << text;
      for (const auto& text : forced) EXPECT_EQ(kernel_of(text), "bulk copies") << text;
      EXPECT_EQ(verify_sampled(*wgmma, forced), static_cast<int>(forced.size())) << tile << split;
      const ScopedEnv largest("CONVGUARD_WGMMA_SPLIT_CLUSTER", "4");
      for (const auto& text : forced) EXPECT_EQ(kernel_of(text), kClusters) << text;
      EXPECT_EQ(verify_sampled(*wgmma, forced), static_cast<int>(forced.size())) << tile << split;
    }
  }
  const ScopedEnv whole("CONVGUARD_WGMMA_SPLIT", "1");
  EXPECT_TRUE(tiles_of(r5c).ends_with(" tiles, split 1")) << tiles_of(r5c);
  EXPECT_EQ(kernel_of(r5c), "bulk copies");
  EXPECT_EQ(verify_sampled(*wgmma, {r5c}), 1);
}
