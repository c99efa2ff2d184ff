// gpu:simt_gemm (f32 forward SIMT implicit GEMM): its own random shapes (full fp64 reference),
// ResNet-50-like layers that take each of its paths (float4 1x1 loads, the gathered im2col, split
// reductions, float4 and element-wise stores) and its declines. Skipped without a GPU, but the
// declines, which need none.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/staged_trial.hpp"
#include "gpu/gpu.hpp"
#include "gpu_shapes.hpp"

using namespace convguard;

namespace {

bool gpu_here() {
  static const bool ok = gpu::device_count() > 0 && gpu::open_device(0).is_ok();
  return ok;
}

// The window of a random shape: H and W up to `size` (W a multiple of 4 in every sixth draw:
// whole float4 images where H*W allows), a 1x1 filter in every third draw (stride 1 in half of
// those: the float4 loads), else up to 5 x 5 with asymmetric padding; stride up to 3 x 2,
// dilation 2 in a fifth of the draws; x and y NHWC in every seventh (w stays KCRS).
void random_window(auto pick, int i, int size, Problem& p) {
  const bool one = i % 3 == 0;
  p.input = {1, pick(1, size), i % 6 == 0 ? 4 * pick(1, 8) : pick(1, size)};
  p.filter = one ? std::array<std::int64_t, 3>{1, 1, 1}
                 : std::array<std::int64_t, 3>{1, pick(1, 5), pick(1, 5)};
  p.stride = {1, one && i % 2 ? 1 : pick(1, 3), one && i % 2 ? 1 : pick(1, 2)};
  p.dilation = {1, pick(0, 4) == 0 ? 2 : 1, 1};
  if (!one) p.pad_begin = {0, pick(0, 2), pick(0, 2)}, p.pad_end = {0, pick(0, 3), pick(0, 2)};
  p.x_layout = p.y_layout = i % 7 == 3 ? Layout::nhwc : Layout::nchw;
}

const Solver& simt() {
  const Solver* s = find_solver("gpu:simt_gemm");
  EXPECT_NE(s, nullptr);
  return *s;
}

}  // namespace

// Random f32 forward shapes: row (K) and column (pixel) tile edges (K <= 64: 64-row tiles), 1x1
// layers whose images are and are not whole float4s (the float4 and gathered B loads), filters up
// to 5, stride up to 3, dilation 2, asymmetric padding, long reductions (split-K), NCHW mostly and
// NHWC (other strides: element-wise loads and stores); a quarter of the draws backward-data
// (stride 1).
TEST(Gpu, SimtGemmOnItsShapes) {
  if (!gpu_here()) GTEST_SKIP() << "no GPU here: GPU tests skipped";
  const int verified =
      convguard::testing::verify_on_shapes("gpu:simt_gemm", 150, [](auto pick, int i) {
        Problem p;
        p.n = pick(1, 4);
        p.c = i % 5 == 1 ? pick(64, 200) : pick(1, 48);  // long reductions: split
        p.k = i % 4 == 0 ? pick(120, 300) : pick(1, 140);
        random_window(pick, i, 30, p);
        if (i % 7 == 5) p.y_layout = Layout::nhwc;
        if (i % 4 == 3) {  // backward-data: stride 1, padding beyond R-1 too, any filter layout
          p.direction = Direction::backward_data;
          p.stride = {1, 1, 1};
          p.pad_begin = {0, pick(0, 3), pick(0, 3)}, p.pad_end = {0, pick(0, 3), pick(0, 3)};
          if (i % 8 == 7) p.w_layout = Layout::nhwc;
        }
        return p;
      });
  EXPECT_GT(verified, 120);
}

// ResNet-50 layers (f32 NCHW, smaller batches), checked against the fp64 reference by sampling
// and every element against gpu:naive: split-K on res5's 3x3 and 1x1 (2048 -> 512), the float4
// 1x1 path (14x14 and 56x56: whole float4 images), res5's 7x7 images (49 pixels: gathered loads,
// element-wise stores), the stride-2 1x1 and 3x3 and conv1 (C = 3, 7x7 stride 2, 147-long rows:
// element-wise filter loads); backward-data of res5's 3x3 (split), res4's 1024 -> 256 1x1 and
// res2's 3x3 (64-row tiles); backward-weights of res4's 3x3 (split), res2's 1x1 (float4 dy and
// x), res5's 1x1 (49-pixel images), conv1 and res4a's stride-2 3x3.
TEST(Gpu, SimtGemmOnLargeLayers) {
  if (!gpu_here()) GTEST_SKIP() << "no GPU here: GPU tests skipped";
  for (const char* text :
       {"mb16ic512ih7oc512oh7kh3ph1", "mb16ic2048ih7oc512oh7kh1", "mb8ic256ih14oc1024oh14kh1",
        "mb4ic64ih56oc256oh56kh1", "mb8ic512ih7oc2048oh7kh1", "mb8ic1024ih14oc2048oh7kh1sh2",
        "mb8ic256ih14oc256oh7kh3sh2ph1", "mb4ic3ih224oc64oh112kh7sh2ph3",
        "mb4ic64ih56oc64oh56kh3ph1", "--dir=BWD_D mb16ic512ih7oc512oh7kh3ph1",
        "--dir=BWD_D mb8ic1024ih14oc256oh14kh1", "--dir=BWD_D mb4ic64ih56oc64oh56kh3ph1",
        "--dir=BWD_W mb16ic256ih14oc256oh14kh3ph1", "--dir=BWD_W mb8ic64ih56oc256oh56kh1",
        "--dir=BWD_W mb8ic512ih7oc2048oh7kh1", "--dir=BWD_W mb4ic3ih224oc64oh112kh7sh2ph3",
        "--dir=BWD_W mb8ic256ih28oc256oh14kh3sh2ph1"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text;
    TrialTensors t(*p);
    fill_inputs(*p, t, 11, FillMode::uniform);
    TrialOptions o;
    o.full_reference_limit = 0;  // sampled, plus the full comparison with gpu:naive
    const TrialResult r = gpu::run_trial(simt(), *p, t, o);
    ASSERT_TRUE(r.ran()) << text << ": " << r.status.message();
    EXPECT_TRUE(r.verdict && r.verdict->ok)
        << text << ": " << (r.verdict ? r.verdict->message : "");
  }
}

// Backward-weights' shapes: K and C*R*S tile edges (K <= 64: 64-row tiles), images whose pixels
// are and are not whole float4s, 1x1 stride-1 layers (float4 x loads), filters up to 5, stride up
// to 3, dilation 2, asymmetric padding, long reductions (split over pixels), NHWC x and dy.
TEST(Gpu, SimtGemmBackwardWeightsOnItsShapes) {
  if (!gpu_here()) GTEST_SKIP() << "no GPU here: GPU tests skipped";
  const int verified =
      convguard::testing::verify_on_shapes("gpu:simt_gemm", 80, [](auto pick, int i) {
        Problem p;
        p.direction = Direction::backward_weights;
        p.n = pick(1, 6);
        p.c = i % 5 == 1 ? pick(30, 90) : pick(1, 40);
        p.k = i % 4 == 0 ? pick(65, 200) : pick(1, 64);
        random_window(pick, i, 32, p);
        return p;
      });
  EXPECT_GT(verified, 60);
}

// What it does not compute, each with its reason (no GPU needed: check() decides).
TEST(Gpu, SimtGemmDeclinesWithReasons) {
  // check() only, no GPU needed; but a build without the CUDA backend (no nvcc) has no solver.
  if (!find_solver("gpu:simt_gemm")) GTEST_SKIP() << "no CUDA backend in this build";
  const std::pair<const char*, const char*> cases[] = {
      {"--dir=BWD_D mb2ic8ih8oc8oh4kh3sh2ph1", "backward-data with stride > 1"},
      {"--dir=BWD_W --wtag=axb mb2ic8ih8oc8oh8kh3ph1", "dense along (c, r, s)"},
      {"--dt=bf16 mb2ic8ih8oc8oh8kh3ph1", "f32 only"},
      {"g2mb2ic8ih8oc8oh8kh3ph1", "one group"},
      {"mb2ic8id5ih5iw5oc8od3oh3ow3kd3kh3kw3", "2D only"},
      {"mb1ic1ih40oc1oh24kh17", "more than 256 filter taps"},
      {"--wtag=axb mb2ic8ih8oc8oh8kh3ph1", "dense along (c, r, s)"}};
  for (const auto& [text, reason] : cases) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text;
    const Status st = simt().check(*p);
    EXPECT_EQ(st.code(), StatusCode::not_applicable) << text;
    EXPECT_NE(st.message().find(reason), std::string::npos) << text << ": " << st.message();
  }
  for (const char* text :
       {"mb32ic64ih56oc256oh56kh1", "--dir=BWD_D mb2ic8ih8oc8oh8kh3ph1",
        "--dir=BWD_W mb2ic8ih8oc8oh8kh3sh2ph1", "--dir=BWD_D --wtag=axb mb2ic8ih8oc8oh8kh3ph1"}) {
    auto ok = parse_problem(text);
    ASSERT_TRUE(ok.is_ok()) << text;
    EXPECT_TRUE(simt().check(*ok).is_ok()) << text << ": " << simt().check(*ok).message();
  }
}
