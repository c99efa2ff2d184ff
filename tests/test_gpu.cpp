// GPU tests (ctest label gpu): every GPU solver verifies on the random property set, gpu:naive
// (the device reference) matches the host fp64 reference, larger layers verify by sampling.
// Without a GPU every test is skipped with the reason (CI has none); docs/perf.md and
// docs/gpu.md record the runs on the H100.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/staged_trial.hpp"
#include "gpu/gpu.hpp"
#include "gpu_shapes.hpp"
#include "random_problem.hpp"

using namespace convguard;
using convguard::testing::expect_verified;
using convguard::testing::verify_on_shapes;

namespace {

bool have_gpu() {
  static const bool ok = gpu::device_count() > 0 && gpu::open_device(0).is_ok();
  return ok;
}

#define REQUIRE_GPU()                                                                      \
  if (!have_gpu())                                                                         \
  GTEST_SKIP() << "no GPU here (" << gpu::backend() << " backend, " << gpu::device_count() \
               << " devices): GPU tests skipped"

// Whether gpu:wgmma_implicit_gemm runs here (an sm_90 GPU and the build's sm_90a code): its
// check() of a problem it takes wherever it runs, with the reason when it does not.
Status wgmma_status() {
  const Solver* s = find_solver("gpu:wgmma_implicit_gemm");
  if (!s) return Status{StatusCode::not_applicable, "no gpu:wgmma_implicit_gemm in this build"};
  const auto probe =
      parse_problem("--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih8oc8oh8kh3ph1");
  return probe ? s->check(*probe) : probe.status();
}
bool wgmma_here() {
  return wgmma_status().is_ok();
}

}  // namespace

TEST(Gpu, EverySolverMatchesTheReferenceOnRandomProblems) {
  REQUIRE_GPU();
  std::uint64_t first = 1, count = 400, wide = 120;
  if (const char* s = std::getenv("CONVGUARD_PROPERTY_SEED")) {
    first = std::strtoull(s, nullptr, 10);
    count = 1, wide = 0;
  }
  std::map<std::string, int> verified;
  // The 400 random problems, then 120 with wide channels (random_wide_problem: 8 to 256 per
  // group, where gpu:wgmma_bwd_weights' C and K multiples of 8 occur; seeds 1001 and up).
  for (std::uint64_t i = 0; i < count + wide; ++i) {
    const std::uint64_t seed = i < count ? first + i : 1000 + (i - count) + 1;
    const Problem p = i < count ? convguard::testing::random_problem(seed)
                                : convguard::testing::random_wide_problem(seed - 1000);
    TrialTensors t(p);
    fill_inputs(p, t, seed, FillMode::uniform);
    for (const Solver* s : solvers_on(Device::gpu)) {
      TrialOptions o;
      o.seed = seed;
      const TrialResult r = gpu::run_trial(*s, p, t, o);
      if (r.status.code() == StatusCode::not_applicable) continue;
      ASSERT_TRUE(r.ran()) << s->id() << " seed " << seed << " " << to_canonical(p) << ": "
                           << r.status.message();
      ASSERT_TRUE(r.verdict && r.verdict->ok)
          << s->id() << " seed " << seed << " " << to_canonical(p) << ": "
          << (r.verdict ? r.verdict->message : "no verdict");
      ++verified[std::string(s->id())];
    }
  }
  for (const Solver* s : solvers_on(Device::gpu)) {
    std::printf("%-28s verified on %d problems\n", std::string(s->id()).c_str(),
                verified[std::string(s->id())]);
    // Every solver must have been exercised (a solver that declines everything is a defect);
    // the tensor-core solvers (dense NHWC/KRSC, one group, 2D) take a few of the random problems
    // now that any channel count and strided backward-data are theirs, and have their own
    // shape tests below.
    // A solver for one GPU generation (the gpu:wgmma_* solvers: sm_90 only) declines all of them
    // on another, saying so.
    if (count > 1) {
      const auto probe =
          parse_problem("--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih8oc8oh8kh3ph1");
      const Status st = s->check(*probe);
      if (!st && st.message().find("needs an sm_90 (Hopper) GPU") != std::string::npos) continue;
      EXPECT_GT(verified[std::string(s->id())], 0) << s->id();
    }
  }
}

// The random property set reaches the tensor-core solvers (any channel count, strided
// backward-data): each accepts some of its 400 problems, so the test above verifies them there
// too (no GPU needed: check() only).
TEST(Gpu, TensorCoreSolversTakeRandomProblems) {
  if (!find_solver("gpu:tc_implicit_gemm")) GTEST_SKIP() << "no CUDA backend in this build";
  for (const char* id :
       {"gpu:tc_implicit_gemm", "gpu:tc_implicit_gemm:tf32", "gpu:tc_bwd_weights",
        "gpu:tc_bwd_weights:tf32", "gpu:wgmma_implicit_gemm", "gpu:wgmma_bwd_weights"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    const bool wgmma = std::string_view(id) == "gpu:wgmma_implicit_gemm";
    if (std::string_view(id).starts_with("gpu:wgmma")) {  // sm_90 only: elsewhere it declines
                                                          // every problem, saying why
      if (const Status st = wgmma_status(); !st) {
        std::printf("%-28s declines here: %s\n", id, st.message().c_str());
        continue;
      }
    }
    int taken = 0;
    std::map<Direction, int> by_direction;
    for (std::uint64_t seed = 1; seed <= 520; ++seed) {  // as the property test: 400 + 120 wide
      const Problem p = seed <= 400 ? convguard::testing::random_problem(seed)
                                    : convguard::testing::random_wide_problem(seed - 400);
      if (s->check(p).is_ok()) ++taken, ++by_direction[p.direction];
    }
    std::printf("%-28s takes %d of the 520 random problems (%d fwd, %d bwd-data, %d bwd-w)\n", id,
                taken, by_direction[Direction::forward], by_direction[Direction::backward_data],
                by_direction[Direction::backward_weights]);
    EXPECT_GT(taken, 0) << id;
    // Its backward-data (stride 1 and stride phases) is reached too, so the property test verifies
    // it.
    if (wgmma) {
      EXPECT_GT(by_direction[Direction::backward_data], 0) << id;
    }
  }
}

TEST(Gpu, LargeLayersVerifyBySampling) {
  REQUIRE_GPU();
  for (const char* text :
       {"mb32ic64ih56oc64oh56kh3ph1", "--dir=BWD_D mb32ic64ih56oc64oh56kh3ph1",
        "--dir=BWD_W mb32ic64ih56oc64oh56kh3ph1",
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih14oc256oh14kh3ph1",
        // 128-wide tensor-core tiles (196 of them: every SM gets one), also in TF32
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic128ih28oc128oh28kh3ph1",
        "--stag=axb --wtag=axb --dtag=axb mb32ic128ih28oc128oh28kh3ph1",
        // ... and gpu:wgmma_implicit_gemm:tf32's 128 x 256 and 256 x 128 tiles (many 1x1 tiles)
        "--stag=axb --wtag=axb --dtag=axb mb32ic64ih56oc256oh56kh1",
        "--stag=axb --wtag=axb --dtag=axb mb32ic256ih56oc128oh56kh1",
        // gpu:wgmma_implicit_gemm (Hopper): 128-wide tiles with K at a tile edge, and a 1x1
        // whose reduction is a single 64-element stage (fewer tiles than the pipeline's depth)
        "--dt=f16 --stag=axb --wtag=axb --dtag=axb mb16ic40ih32oc200oh32kh3ph1",
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic64ih56oc256oh56kh1",
        // ... and its 256 x 128 tile (two m64 blocks per warpgroup): 392 tiles of it.
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih56oc128oh56kh1",
        // ResNet-50's last stage: few output tiles, so the tensor-core
        // solver splits the reduction (split-K)
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic512ih7oc512oh7kh3ph1",
        "--dt=f16 --stag=axb --wtag=axb --dtag=axb mb1ic256ih14oc256oh14kh3ph1",
        // backward-data on tensor cores: 128-wide tiles, split-K, a 1x1 with C != K
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic128ih28oc128oh28kh3ph1",
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic512ih7oc512oh7kh3ph1",
        "--dir=BWD_D --dt=f16 --stag=axb --wtag=axb --dtag=axb mb8ic1024ih14oc256oh14kh1",
        "--dir=BWD_D --stag=axb --wtag=axb --dtag=axb mb8ic256ih14oc256oh14kh3ph1",
        // stride-1 backward-data on gpu:wgmma_implicit_gemm (Hopper): ResNet-50's 3x3 layers
        // at batch 32 (res2 and res4; res3 and res5 above), and 1x1 layers that take its
        // 128 x 256 (C = 256 > K) and 256 x 128 tiles
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic64ih56oc64oh56kh3ph1",
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih14oc256oh14kh3ph1",
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih56oc64oh56kh1",
        "--dir=BWD_D --dt=f16 --stag=axb --wtag=axb --dtag=axb mb32ic128ih56oc256oh56kh1",
        // backward-weights on tensor cores: split reductions, 128-wide tiles, a strided 1x1
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic64ih56oc64oh56kh3ph1",
        "--dir=BWD_W --dt=f16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih14oc256oh14kh3ph1",
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb8ic512ih28oc1024oh14kh1sh2",
        // ... and on gpu:wgmma_bwd_weights (Hopper): ResNet-50's res5 3x3 (144 tiles: unsplit),
        // res2 1x1 64->256 (K = 256, 64 columns), a dilated, padded 3x3 with K and C tails
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic512ih7oc512oh7kh3ph1",
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic64ih56oc256oh56kh1",
        "--dir=BWD_W --dt=f16 --stag=axb --wtag=axb --dtag=axb mb16ic136ih27oc200oh27kh3ph2dh1",
        // ragged channels: ResNet-50's conv1 (C = 3, 7x7 stride 2) in all three directions,
        // odd C and K; strided backward-data (stride phases): ResNet-50's stride-2 3x3 and 1x1
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb8ic3ih224oc64oh112kh7sh2ph3",
        "--dir=BWD_D --dt=f16 --stag=axb --wtag=axb --dtag=axb mb4ic3ih224oc64oh112kh7sh2ph3",
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb8ic3ih224oc64oh112kh7sh2ph3",
        "--dt=f16 --stag=axb --wtag=axb --dtag=axb mb16ic36ih28oc20oh28kh3ph1",
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic128ih56oc128oh28kh3sh2ph1",
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic512ih14oc512oh7kh3sh2ph1",
        "--dir=BWD_D --dt=f16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih56oc512oh28kh1sh2"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text;
    TrialTensors t(*p);
    fill_inputs(*p, t, 7, FillMode::uniform);
    bool wgmma_ran = false, wgmma_bwdw_ran = false;
    for (const Solver* s : solvers_on(Device::gpu)) {
      TrialOptions o;
      o.full_reference_limit = 0;  // sampled: these are too large for a full host reference
      const TrialResult r = gpu::run_trial(*s, *p, t, o);
      if (r.status.code() == StatusCode::not_applicable) continue;
      ASSERT_TRUE(r.ran()) << s->id() << " " << text << ": " << r.status.message();
      EXPECT_TRUE(r.verdict && r.verdict->ok)
          << s->id() << " " << text << ": " << (r.verdict ? r.verdict->message : "");
      wgmma_ran = wgmma_ran || s->id() == "gpu:wgmma_implicit_gemm" ||
                  s->id() == "gpu:wgmma_implicit_gemm:tf32";
      wgmma_bwdw_ran = wgmma_bwdw_ran || s->id() == "gpu:wgmma_bwd_weights";
    }
    // On Hopper every f16/bf16 line here, forward or backward-data, is the wgmma solver's too, and
    // every NHWC f32 one (C and K multiples of 4) its TF32 variant's: a regression that made it
    // decline one must not pass as a skip.
    const bool nhwc = p->x_layout == Layout::nhwc;
    if (wgmma_here() && p->direction != Direction::backward_weights &&
        (p->dtype != DType::f32 || (nhwc && p->c % 4 == 0 && p->k % 4 == 0))) {
      EXPECT_TRUE(wgmma_ran) << "gpu:wgmma_implicit_gemm(:tf32) declined " << text;
    }
    // ... and every f16/bf16 backward-weights line is gpu:wgmma_bwd_weights' but 3D ones with C
    // or K not a multiple of 8 (those stay gpu:tc_bwd_weights').
    if (wgmma_here() && p->dtype != DType::f32 && p->direction == Direction::backward_weights &&
        ((p->c % 8 == 0 && p->k % 8 == 0) || p->spatial_dims != 3)) {
      EXPECT_TRUE(wgmma_bwdw_ran) << "gpu:wgmma_bwd_weights declined " << text;
    }
  }
}

// Sizes, strides and paddings that the kernels' int arguments cannot hold, and a backward-data
// filter flip whose grid would pass CUDA's 65535 blocks in y, are declined by check(), not
// truncated (a padding of 2^32 became 0) or failed at launch. Needs no GPU: check() decides.
TEST(Gpu, TensorCoreSolversDeclineSizesBeyondTheirIntArguments) {
  for (const char* text :
       {"--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih1oc8oh1kh1ph4294967296",
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih1oc8oh1kh1ph4294967296",
        "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih1oc2097153oh1kh1"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text;
    for (const char* id : {"gpu:tc_implicit_gemm", "gpu:wgmma_implicit_gemm"}) {
      const Solver* s = find_solver(id);
      if (!s) continue;  // a build without the GPU solvers
      const Status st = s->check(*p);
      EXPECT_EQ(st.code(), StatusCode::not_applicable) << id << " " << text;
      EXPECT_TRUE(st.message().find("32-bit") != std::string::npos ||
                  st.message().find("grid too large") != std::string::npos)
          << id << " " << text << ": " << st.message();
    }
  }
  // Backward-weights: a padding of 2^32 (its output 1 pixel wide, so only the argument check
  // catches it), and more columns than the grid holds.
  for (const char* text :
       {"--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih1oc8oh1kh1ph4294967296",
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8388608ih1oc8oh1kh1"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    Problem f32 = *p;  // the TF32 variant's
    f32.dtype = DType::f32;
    for (const char* id :
         {"gpu:tc_bwd_weights", "gpu:tc_bwd_weights:tf32", "gpu:wgmma_bwd_weights"}) {
      const Solver* s = find_solver(id);
      if (!s) continue;
      const Status st = s->check(is_tf32_variant(id) ? f32 : *p);
      EXPECT_EQ(st.code(), StatusCode::not_applicable) << id << " " << text;
      EXPECT_TRUE(st.message().find("32-bit") != std::string::npos ||
                  st.message().find("grid too large") != std::string::npos)
          << id << " " << text << ": " << st.message();
    }
  }
}

// Channel counts that are not multiples of a 16-byte chunk (the tensor-core solvers' ragged path:
// element-wise zero-filled loads, element-wise stores for odd output counts): C = 3 first layers,
// odd and even counts below, between and above chunks.
constexpr int kRaggedChannels[] = {3, 5, 12, 20, 36, 1, 7, 9, 13, 66};
int ragged_channels(auto pick) {
  return kRaggedChannels[pick(0, static_cast<int>(std::size(kRaggedChannels)) - 1)];
}

// Random shapes the tensor-core solver accepts: edges of every tile dimension (M, N and the
// reduction not multiples of 128/128/32), stride, dilation, padding, odd sizes, f16 and bf16;
// with tf32, f32 problems; in a third of the draws C and in another third K not a multiple of
// a chunk (ragged).
Problem tensor_core_shape(auto pick, int i, bool tf32) {
  Problem p;
  p.n = pick(1, 4);
  p.c = i % 3 == 1 ? ragged_channels(pick) : (tf32 ? 4 : 8) * pick(1, 12);
  p.k = i % 3 == 2 ? ragged_channels(pick) : 8 * pick(1, 40);
  p.input = {1, pick(1, 40), pick(1, 40)};
  p.filter = {1, pick(1, 5), pick(1, 5)};
  p.stride = {1, pick(1, 2), pick(1, 2)};
  p.dilation = {1, pick(0, 4) == 0 ? 2 : 1, 1};
  p.pad_begin = {0, pick(0, 2), pick(0, 2)};
  p.pad_end = p.pad_begin;
  p.dtype = tf32 ? DType::f32 : i % 2 ? DType::bf16 : DType::f16;
  p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
  return p;
}

TEST(Gpu, TensorCoreSolverOnItsShapes) {
  REQUIRE_GPU();
  EXPECT_GT(verify_on_shapes("gpu:tc_implicit_gemm", 60,
                             [](auto pick, int i) { return tensor_core_shape(pick, i, false); }),
            40);
  EXPECT_GT(verify_on_shapes("gpu:tc_implicit_gemm:tf32", 60,
                             [](auto pick, int i) { return tensor_core_shape(pick, i, true); }),
            40);
}

// gpu:wgmma_implicit_gemm (Hopper only; skipped elsewhere with its reason): forward f16/bf16 on
// the tensor-core shapes above (tile edges, stride, dilation, padding, ragged C or K in a third of
// the draws each, split reductions where few tiles), and a dozen larger layers that take its
// 128-wide tiles.
// Skips a test of a gpu:wgmma_* solver where it cannot run (no Hopper GPU), with its reason:
// its check() of `probe_text`, a problem it takes wherever it runs.
#define REQUIRE_WGMMA_SOLVER(id, probe_text)                                                      \
  REQUIRE_GPU();                                                                                  \
  {                                                                                               \
    const Solver* wg = find_solver(id);                                                           \
    if (!wg) GTEST_SKIP() << "no CUDA backend in this build";                                     \
    const auto probe = parse_problem(probe_text);                                                 \
    ASSERT_TRUE(probe.is_ok());                                                                   \
    if (const Status st = wg->check(*probe); !st) {                                               \
      /* On a Hopper GPU a build without the kernel's sm_90a code is a defect, not a skip. */     \
      if (st.message().find("holds no sm_90a code") != std::string::npos) FAIL() << st.message(); \
      GTEST_SKIP() << st.message();                                                               \
    }                                                                                             \
  }
#define REQUIRE_WGMMA()                           \
  REQUIRE_WGMMA_SOLVER("gpu:wgmma_implicit_gemm", \
                       "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih8oc8oh8kh3ph1")
#define REQUIRE_WGMMA_BWDW()   \
  REQUIRE_WGMMA_SOLVER(        \
      "gpu:wgmma_bwd_weights", \
      "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8ih8oc8oh8kh3ph1")

TEST(Gpu, TensorCoreWgmmaOnItsShapes) {
  REQUIRE_WGMMA();
  EXPECT_GT(verify_on_shapes("gpu:wgmma_implicit_gemm", 90,
                             [](auto pick, int i) { return tensor_core_shape(pick, i, false); }),
            70);
  EXPECT_GE(verify_on_shapes("gpu:wgmma_implicit_gemm", 12,
                             [](auto pick, int i) {
                               Problem p = tensor_core_shape(pick, i, false);
                               p.n = pick(6, 10);  // 40 to 100 M tiles
                               p.input = {1, pick(28, 40), pick(28, 40)};
                               p.k = 8 * pick(17, 40);  // > 128: two or more tile columns
                               return p;
                             }),
            12);
  // Few tiles and a long reduction (3x3 over 384-512 channels at 5x5 to 9x9): the split
  // reduction's fp32 partials; ragged C in half of them.
  EXPECT_GE(verify_on_shapes("gpu:wgmma_implicit_gemm", 8,
                             [](auto pick, int i) {
                               Problem p = tensor_core_shape(pick, i, false);
                               p.n = pick(1, 2);
                               p.input = {1, pick(5, 9), pick(5, 9)};
                               p.filter = {1, 3, 3};
                               p.stride = p.dilation = {1, 1, 1};
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.c = 8 * pick(48, 64) + (i % 2 ? 3 : 0);
                               p.k = 8 * pick(9, 40);
                               return p;
                             }),
            8);
}

// Backward-data on tensor cores (the forward kernel on dy and the flipped filter, per stride
// phase): stride 1 in half the draws, else 2 or 3 in either dimension (phases without taps too:
// a 1x1 or 2x2 filter under stride 3), filters 1, 3, 5 and 2 (even), padding 0..2 at the
// beginning (beyond R-1 too: negative padding of the flipped filter) and 0..3 at the end (dy
// rows that reach no dx), odd H and W, batches above 1, C != K, ragged C or K in a third of the
// draws each, tile edges in M = N*H*W, in C (the GEMM's columns) and in the reduction R*S*K; 1D
// problems too.
Problem tensor_core_backward_data_shape(auto pick, int i, bool tf32) {
  Problem p;
  const int sizes[] = {1, 3, 5, 2};
  p.n = pick(1, 4);
  p.c = i % 3 == 1 ? ragged_channels(pick) : 8 * pick(1, 40);
  do {
    p.k = i % 3 == 2 ? ragged_channels(pick) : (tf32 ? 4 : 8) * pick(1, 12);
  } while (p.k == p.c);
  const bool one_d = i % 7 == 3, strided = i % 2 == 1;
  p.spatial_dims = one_d ? 1 : 2;
  p.input = {1, one_d ? 1 : pick(1, 40), pick(1, 40)};
  p.filter = {1, one_d ? 1 : sizes[pick(0, 3)], sizes[pick(0, 3)]};
  p.stride = {1, one_d || !strided ? 1 : pick(1, 3), strided ? pick(2, 3) : 1};
  p.pad_begin = {0, one_d ? 0 : pick(0, 2), pick(0, 2)};
  p.pad_end = {0, one_d ? 0 : pick(0, 3), pick(0, 3)};
  p.direction = Direction::backward_data;
  p.dtype = tf32 ? DType::f32 : i % 2 ? DType::bf16 : DType::f16;
  p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
  return p;
}

// gpu:wgmma_implicit_gemm:tf32 (Hopper): the TF32 tensor-core shapes above with C and K made
// multiples of 4 (its whole 16-byte chunks; K often not of 8: the staged epilogue's 4-float
// chunks), forward and backward-data (strided in half), and few tiles with a long reduction (its
// split-K partials).
Problem wgmma_tf32_shape(Problem p, auto pick) {
  if (p.c % 4 != 0) p.c = 4 * pick(1, 24);
  if (p.k % 4 != 0) p.k = 4 * pick(1, 80);
  return p;
}
#define REQUIRE_WGMMA_TF32()                           \
  REQUIRE_WGMMA_SOLVER("gpu:wgmma_implicit_gemm:tf32", \
                       "--stag=axb --wtag=axb --dtag=axb mb1ic8ih8oc8oh8kh3ph1")

TEST(Gpu, TensorCoreWgmmaTf32OnItsShapes) {
  REQUIRE_WGMMA_TF32();
  const char* id = "gpu:wgmma_implicit_gemm:tf32";
  EXPECT_GT(verify_on_shapes(id, 80,
                             [](auto pick, int i) {
                               return wgmma_tf32_shape(tensor_core_shape(pick, i, true), pick);
                             }),
            60);
  EXPECT_GT(verify_on_shapes(id, 80,
                             [](auto pick, int i) {
                               return wgmma_tf32_shape(
                                   tensor_core_backward_data_shape(pick, i, true), pick);
                             }),
            50);
  EXPECT_GE(verify_on_shapes(id, 8,
                             [](auto pick, int i) {
                               Problem p = tensor_core_shape(pick, i, true);
                               p.n = pick(1, 2);
                               p.input = {1, pick(5, 9), pick(5, 9)};
                               p.filter = {1, 3, 3};
                               p.stride = p.dilation = {1, 1, 1};
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.c = 4 * pick(96, 128);
                               p.k = 4 * pick(18, 80);
                               p.direction = i % 2 ? Direction::backward_data : Direction::forward;
                               return p;
                             }),
            8);
}

// What the TF32 variant declines, each with its reason (no GPU needed).
TEST(Gpu, WgmmaTf32DeclinesWithReasons) {
  const Solver* s = find_solver("gpu:wgmma_implicit_gemm:tf32");
  if (!s) GTEST_SKIP() << "no CUDA backend in this build";
  const std::string nhwc = "--stag=axb --wtag=axb --dtag=axb ";
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"--dt=bf16 " + nhwc + "mb2ic64ih14oc64oh14kh3ph1", "the TF32 variant is for f32"},
           {nhwc + "mb2ic3ih14oc64oh14kh3ph1", "multiples of 4"},
           {nhwc + "mb2ic64ih14oc30oh14kh3ph1", "multiples of 4"},
           {"mb2ic64ih14oc64oh14kh3ph1", "dense NHWC"},
           {"--dir=BWD_W " + nhwc + "mb2ic64ih14oc64oh14kh3ph1", "forward and backward-data only"},
           {"--dir=BWD_D " + nhwc + "mb2ic64ih14oc64oh10kh3dh1", "dilation 1 only"}}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    const Status st = s->check(*p);
    EXPECT_EQ(st.code(), StatusCode::not_applicable) << text;
    EXPECT_NE(st.message().find(why), std::string::npos) << text << ": " << st.message();
  }
}

TEST(Gpu, TensorCoreBackwardDataOnItsShapes) {
  REQUIRE_GPU();
  EXPECT_GT(verify_on_shapes(
                "gpu:tc_implicit_gemm", 120,
                [](auto pick, int i) { return tensor_core_backward_data_shape(pick, i, false); }),
            70);
  EXPECT_GT(verify_on_shapes(
                "gpu:tc_implicit_gemm:tf32", 60,
                [](auto pick, int i) { return tensor_core_backward_data_shape(pick, i, true); }),
            35);
}

// Backward-data on gpu:wgmma_implicit_gemm (the flipped (sub-)filters in the workspace, then its
// forward kernel, per stride phase): (1) the tensor-core backward-data shapes at stride 1 (filters
// 1, 2, 3, 5, padding 0..2 at the beginning, beyond R-1 too, and 0..3 at the end, ragged C or K
// in a third of the draws each, 1D, tile edges); (2) every filter of 1, 3, 5, 7 with padding 0, 1
// and 2 on odd sizes (M tails), against C = 3 (ResNet's conv1 backward: three dx channels),
// K = 3, odd C and K (37, 29) and aligned channels, at stride 1 and 2; (3) the same shapes as
// drawn, strided in half of them (stride phases, some without taps); (4) few tiles and a long
// reduction over K (its split-K partials after the flipped filter in the workspace), odd K in
// half of them.
TEST(Gpu, TensorCoreWgmmaBackwardDataOnItsShapes) {
  REQUIRE_WGMMA();
  EXPECT_GT(verify_on_shapes("gpu:wgmma_implicit_gemm", 90,
                             [](auto pick, int i) {
                               Problem p = tensor_core_backward_data_shape(pick, i, false);
                               p.stride = {1, 1, 1};
                               return p;
                             }),
            70);
  const int filters[] = {1, 3, 5, 7};
  const std::pair<int, int> channels[] = {{3, 64}, {64, 3}, {37, 29}, {96, 136}};  // C, K
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_implicit_gemm", 96,
                             [&](auto, int i) {
                               Problem p;
                               p.n = 2;
                               p.c = channels[i % 4].first, p.k = channels[i % 4].second;
                               p.input = {1, 15, 17};
                               p.filter = {1, filters[i / 12 % 4], filters[i / 12 % 4]};
                               p.stride = {1, 1 + i / 48, 1 + i / 48};
                               p.pad_begin = p.pad_end = {0, (i / 4) % 3, (i / 4) % 3};
                               p.direction = Direction::backward_data;
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
                               return p;
                             }),
            96);
  // Strided: the tensor-core backward-data shapes as drawn (stride 2 or 3 in half of them, phases
  // without taps too).
  EXPECT_GT(verify_on_shapes(
                "gpu:wgmma_implicit_gemm", 120,
                [](auto pick, int i) { return tensor_core_backward_data_shape(pick, i, false); }),
            70);
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_implicit_gemm", 8,
                             [](auto pick, int i) {
                               Problem p;
                               p.n = pick(1, 2);
                               p.c = 8 * pick(9, 40);
                               p.k = 8 * pick(48, 64) + (i % 2 ? 3 : 0);
                               p.input = {1, pick(5, 9), pick(5, 9)};
                               p.filter = {1, 3, 3};
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.direction = Direction::backward_data;
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
                               return p;
                             }),
            8);
}

// What gpu:wgmma_implicit_gemm declines in the backward directions, each with its reason and
// who takes it (checked before the device: no GPU needed).
TEST(Gpu, WgmmaBackwardDeclinesWithReasons) {
  const Solver* s = find_solver("gpu:wgmma_implicit_gemm");
  if (!s) GTEST_SKIP() << "no CUDA backend in this build";
  const std::string nhwc = "--dt=bf16 --stag=axb --wtag=axb --dtag=axb ";
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"--dir=BWD_D " + nhwc + "mb2ic64ih40oc64oh8kh3sh5ph1",
            "at most 16 stride phases (stride_d * stride_h * stride_w <= 16; more: "
            "gpu:implicit_gemm)"},
           {"--dir=BWD_D " + nhwc + "mb2ic64ih14oc64oh10kh3dh1", "dilation 1 only"},
           {"--dir=BWD_D " + nhwc + "g2mb2ic64ih14oc64oh14kh3ph1", "one group only"},
           {"--dir=BWD_D --dt=bf16 mb2ic64ih14oc64oh14kh3ph1", "dense NHWC"},
           {"--dir=BWD_D --stag=axb --wtag=axb --dtag=axb mb2ic64ih14oc64oh14kh3ph1", "f16/bf16"},
           {"--dir=BWD_W " + nhwc + "mb2ic64ih14oc64oh14kh3ph1", "gpu:wgmma_bwd_weights"}}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    const Status st = s->check(*p);
    EXPECT_EQ(st.code(), StatusCode::not_applicable) << text;
    EXPECT_NE(st.message().find(why), std::string::npos) << text << ": " << st.message();
  }
}

// What the tensor-core backward solvers decline, each with its reason (no GPU needed).
TEST(Gpu, TensorCoreBackwardDeclinesWithReasons) {
  const Solver* s = find_solver("gpu:tc_implicit_gemm");
  if (!s) GTEST_SKIP() << "no CUDA backend in this build";
  const std::string nhwc = "--dir=BWD_D --dt=bf16 --stag=axb --wtag=axb --dtag=axb ";
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {nhwc + "mb2ic64ih40oc64oh8kh3sh5ph1", "at most 16 stride phases"},
           {nhwc + "mb2ic64ih14oc64oh10kh3dh1", "dilation 1 only"},
           {nhwc + "g2mb2ic64ih14oc64oh14kh3ph1", "one group only"},
           {"--dir=BWD_D --dt=bf16 mb2ic64ih14oc64oh14kh3ph1", "dense NHWC"},
           {"--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb2ic64ih14oc64oh14kh3ph1",
            "forward and backward-data only"}}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    const Status st = s->check(*p);
    EXPECT_EQ(st.code(), StatusCode::not_applicable) << text;
    EXPECT_NE(st.message().find(why), std::string::npos) << text << ": " << st.message();
  }
  const Solver* w = find_solver("gpu:tc_bwd_weights");
  ASSERT_NE(w, nullptr);
  const std::string nhwc_w = "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb ";
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"--dir=BWD_W --stag=axb --wtag=axb --dtag=axb mb2ic64ih14oc64oh14kh3ph1",
            "f16/bf16 only"},
           {nhwc + "mb2ic64ih14oc64oh14kh3ph1", "backward-weights only"},
           {"--dir=BWD_W --dt=bf16 mb2ic64ih14oc64oh14kh3ph1", "dense NHWC"}}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    const Status st = w->check(*p);
    EXPECT_EQ(st.code(), StatusCode::not_applicable) << text;
    EXPECT_NE(st.message().find(why), std::string::npos) << text << ": " << st.message();
  }
  // Accepted now: strided backward-data, padding beyond R-1, ragged channels (C = 3, 60, odd K).
  for (const std::string& text : std::vector<std::string>{
           nhwc + "mb2ic64ih14oc32oh14kh3ph1", nhwc + "mb2ic64ih14oc64oh7kh3sh2ph1",
           nhwc + "mb2ic64ih14oc64oh16kh1ph1", nhwc + "mb2ic3ih224oc64oh112kh7sh2ph3",
           "--dt=f16 --stag=axb --wtag=axb --dtag=axb mb2ic3ih224oc64oh112kh7sh2ph3",
           "--stag=axb --wtag=axb --dtag=axb mb2ic3ih24oc5oh24kh3ph1"}) {
    const Solver* f = text.starts_with("--stag") ? find_solver("gpu:tc_implicit_gemm:tf32") : s;
    ASSERT_NE(f, nullptr);
    auto ok = parse_problem(text);
    ASSERT_TRUE(ok.is_ok()) << text;
    EXPECT_TRUE(f->check(*ok).is_ok()) << text << ": " << f->check(*ok).message();
  }
  for (const char* text :
       {"--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb2ic60ih14oc64oh14kh3ph1",
        "--dir=BWD_W --dt=f16 --stag=axb --wtag=axb --dtag=axb mb2ic3ih224oc64oh112kh7sh2ph3",
        "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb2ic20ih14oc5oh14kh3ph1"}) {
    auto ok = parse_problem(text);
    ASSERT_TRUE(ok.is_ok()) << text;
    EXPECT_TRUE(w->check(*ok).is_ok()) << text << ": " << w->check(*ok).message();
  }
  // The TF32 variant: f32 only, any channel count (C = 3, C = 6 and K = 5 not multiples of 4).
  const Solver* t = find_solver("gpu:tc_bwd_weights:tf32");
  ASSERT_NE(t, nullptr);
  const std::string f32 = "--dir=BWD_W --stag=axb --wtag=axb --dtag=axb ";
  auto bf16 = parse_problem(nhwc_w + "mb2ic64ih14oc64oh14kh3ph1");
  ASSERT_TRUE(bf16.is_ok());
  EXPECT_NE(t->check(*bf16).message().find("the TF32 variant is for f32 problems"),
            std::string::npos)
      << t->check(*bf16).message();
  for (const std::string& text :
       {f32 + "mb2ic64ih14oc64oh14kh3ph1", f32 + "mb2ic3ih224oc64oh112kh7sh2ph3",
        f32 + "mb2ic6ih14oc5oh14kh3ph1", f32 + "mb2ic6id6ih6iw6oc8kd3kh3kw3"}) {
    auto ok = parse_problem(text);
    ASSERT_TRUE(ok.is_ok()) << text;
    EXPECT_TRUE(t->check(*ok).is_ok()) << text << ": " << t->check(*ok).message();
  }
}

// Backward-weights on tensor cores: any stride, dilation and (asymmetric) padding, filters 1, 2,
// 3, 5, odd sizes, batches above 1, C != K, tile edges in K and in R*S*C, 1D problems; on the
// H100 most of these split the reduction (few output tiles, many pixels). tf32: f32 problems
// (the `:tf32` variant, whose chunks are 4 values: of the ragged draws 12, 20 and 36 are whole).
Problem tensor_core_backward_weights_shape(auto pick, int i, bool tf32 = false) {
  Problem p;
  const int sizes[] = {1, 3, 5, 2};
  p.n = pick(1, 4);
  p.c = i % 3 == 1 ? ragged_channels(pick) : 8 * pick(1, 24);
  do {
    p.k = i % 3 == 2 ? ragged_channels(pick) : 8 * pick(1, 24);
  } while (p.k == p.c);
  const bool one_d = i % 7 == 3;
  p.spatial_dims = one_d ? 1 : 2;
  p.input = {1, one_d ? 1 : pick(1, 40), pick(1, 40)};
  p.filter = {1, one_d ? 1 : sizes[pick(0, 3)], sizes[pick(0, 3)]};
  p.stride = {1, one_d ? 1 : pick(1, 2), pick(1, 2)};
  p.dilation = {1, !one_d && pick(0, 3) == 0 ? 2 : 1, pick(0, 3) == 0 ? 2 : 1};
  p.pad_begin = {0, one_d ? 0 : pick(0, 2), pick(0, 2)};
  p.pad_end = {0, one_d ? 0 : pick(0, 2), pick(0, 2)};
  p.direction = Direction::backward_weights;
  p.dtype = tf32 ? DType::f32 : i % 2 ? DType::bf16 : DType::f16;
  p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
  return p;
}

TEST(Gpu, TensorCoreBackwardWeightsOnItsShapes) {
  REQUIRE_GPU();
  EXPECT_GT(verify_on_shapes(
                "gpu:tc_bwd_weights", 80,
                [](auto pick, int i) { return tensor_core_backward_weights_shape(pick, i); }),
            50);
}

// The TF32 variant: the same draws in f32, then a first layer (C = 3, split), C = 6 and K = 5
// (ragged), a layer with more output tiles than the draws have (K 256 x R*S*C 2304) and two 1x1
// layers, one strided.
TEST(Gpu, TensorCoreBackwardWeightsTf32OnItsShapes) {
  REQUIRE_GPU();
  EXPECT_GT(verify_on_shapes(
                "gpu:tc_bwd_weights:tf32", 80,
                [](auto pick, int i) { return tensor_core_backward_weights_shape(pick, i, true); }),
            50);
  const std::string f32 = "--dir=BWD_W --stag=axb --wtag=axb --dtag=axb ";
  const Solver* t = find_solver("gpu:tc_bwd_weights:tf32");
  ASSERT_NE(t, nullptr);
  for (const std::string& text :
       {f32 + "mb8ic3ih224oc64oh112kh7sh2ph3", f32 + "mb4ic6ih30oc5oh30kh3ph1",
        f32 + "mb4ic256ih14oc256oh14kh3ph1", f32 + "mb2ic64ih56oc64oh56kh1",
        f32 + "mb2ic128ih28oc256oh14kh1sh2"})
    expect_verified(*t, text);
}

// An NHWC backward-weights problem of an f x f filter, bf16 or f16.
static Problem nhwc_backward_weights(int n, int k, int c, int h, int w, int f, bool bf16) {
  return convguard::testing::nhwc_problem(Direction::backward_weights,
                                          bf16 ? DType::bf16 : DType::f16, n, c, k, h, w, f, f);
}

static void verify_wgmma_bwdw_ragged() {
  const int ks[] = {5, 13, 20, 64, 130}, cs[] = {1, 3, 5, 12, 67}, filters[] = {1, 3, 7};
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_bwd_weights", 45,
                             [&](auto pick, int i) {
                               const int f = filters[i / 15];
                               Problem p = nhwc_backward_weights(1 + i % 4, ks[i % 5],
                                                                 cs[i / 5 % 5], 14 + pick(0, 16),
                                                                 15 + pick(0, 16), f, i % 2);
                               p.stride = {1, 1 + i % 2, 1 + i % 3 / 2};
                               p.dilation = {1, 1, 1 + (i % 7 == 3)};
                               p.pad_begin = {0, pick(0, f / 2), pick(0, f / 2)};
                               p.pad_end = {0, pick(0, f / 2), pick(0, f / 2)};
                               return p;
                             }),
            45);
  // Padded problems that reach the other plans: K = 136 over 5x5 taps (clusters: K and the
  // padded R*S*C at least 128), C = 60 padded to 64 (the bulk-copy kernel where its walk fits),
  // and a single row (H = 1) under a 1 x 7 filter; each with the kRagged loads as well when the
  // test forces them.
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_bwd_weights", 6,
                             [](auto pick, int i) {
                               Problem p = i < 2   ? nhwc_backward_weights(4, 136, 3, 40, 44, 5, i)
                                           : i < 4 ? nhwc_backward_weights(2, 64, 60, 18, 20, 3, i)
                                                   : nhwc_backward_weights(3, 72, 5, 1, 300, 1, i);
                               if (i >= 4) p.filter = {1, 1, 7}, p.pad_begin = {0, 0, pick(0, 3)};
                               if (i < 4) p.pad_begin = p.pad_end = {0, 1, 1};
                               p.stride = {1, 1, 1 + i % 2};
                               return p;
                             }),
            6);
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_bwd_weights", 2,
                             [](auto, int i) {
                               Problem p = nhwc_backward_weights(8, 64, 3, 224, 224, 7, i);
                               p.stride = {1, 2, 2};
                               p.pad_begin = p.pad_end = {0, 3, 3};
                               return p;
                             }),
            2);
}

// gpu:wgmma_bwd_weights with C or K not a multiple of 8: C padded to 8-channel chunks in the
// workspace where K is a multiple of 8 (64 here), else its kRagged form (each element loaded
// alone, zero past the tensors, the padding and R*S*C; pairs of dw stored unaligned or cut); then
// every shape again with the kRagged form forced (CONVGUARD_WGMMA_BWDW_PAD=0). First layers (C =
// 3), odd C and K, filters 1 to 7, strides, dilation, padding, both types; then ResNet-50's conv1
// at batch 8, whose long reduction is split, and whose workspace holds the padded x.
TEST(Gpu, TensorCoreWgmmaBackwardWeightsRagged) {
  REQUIRE_WGMMA_BWDW();
  // The caller's CONVGUARD_WGMMA_BWDW_PAD, restored however the test ends.
  struct RestorePad {
    const char* was = std::getenv("CONVGUARD_WGMMA_BWDW_PAD");
    std::string value = was ? was : "";
    ~RestorePad() {
      if (was)
        setenv("CONVGUARD_WGMMA_BWDW_PAD", value.c_str(), 1);
      else
        unsetenv("CONVGUARD_WGMMA_BWDW_PAD");
    }
  } restore;
  Problem conv1 = nhwc_backward_weights(8, 64, 3, 224, 224, 7, true);
  conv1.stride = {1, 2, 2};
  conv1.pad_begin = conv1.pad_end = {0, 3, 3};
  std::size_t workspace[2] = {};
  for (const bool pad : {true, false}) {
    SCOPED_TRACE(pad ? "C padded where K % 8 == 0" : "kRagged loads only");
    if (pad)
      unsetenv("CONVGUARD_WGMMA_BWDW_PAD");
    else
      setenv("CONVGUARD_WGMMA_BWDW_PAD", "0", 1);
    verify_wgmma_bwdw_ragged();
    const auto ws = find_solver("gpu:wgmma_bwd_weights")->workspace_bytes(conv1);
    ASSERT_TRUE(ws.is_ok());
    workspace[pad ? 0 : 1] = *ws;
  }
  // Padded, the workspace holds conv1's x at 8 channels besides whatever the splits take.
  EXPECT_GE(workspace[0], workspace[1] + std::size_t{8} * 224 * 224 * 8 * 2);
}

// gpu:wgmma_bwd_weights (Hopper only; skipped elsewhere with its reason): (1) the tensor-core
// backward-weights shapes with C and K multiples of 8 (stride 1-2, dilation 1-2, asymmetric
// padding 0-2, filters 1/2/3/5, odd sizes, 1D; most split the reduction, small ones do not);
// (2) fixed edge shapes, full fp64 reference: K tails in one and two 128-row tiles (8, 56, 72,
// 136, 200), column tails (C = 8, 24, 40 under 1x1, 3x3, 5x5),
// pixel counts off the 64-pixel stage (odd sizes), stride 2 and 3, padding 0-3 asymmetric,
// dilation 2 and 3, batch 1-5, long reductions that split into many ranges, and more tiles than
// SMs (32-pixel stages).
TEST(Gpu, TensorCoreWgmmaBackwardWeightsOnItsShapes) {
  REQUIRE_WGMMA_BWDW();
  EXPECT_GT(verify_on_shapes("gpu:wgmma_bwd_weights", 90,
                             [](auto pick, int i) {
                               Problem p = tensor_core_backward_weights_shape(pick, i);
                               p.c = (p.c + 7) / 8 * 8;
                               p.k = (p.k + 7) / 8 * 8;
                               return p;
                             }),
            70);
  const int ks[] = {8, 56, 72, 136, 200}, cs[] = {8, 24, 40}, filters[] = {1, 3, 5};
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_bwd_weights", 45,
                             [&](auto pick, int i) {
                               Problem p;
                               p.n = 1 + i % 5;
                               p.k = ks[i % 5];
                               p.c = cs[i / 5 % 3];
                               p.input = {1, 9 + i % 4 * 6, 11 + i % 3 * 8};
                               const int f = filters[i / 15];
                               p.filter = {1, f, f};
                               p.stride = {1, 1 + i % 3, 1 + i % 2};
                               p.dilation = {1, 1 + (i % 4 == 3), 1 + 2 * (i % 7 == 5)};
                               p.pad_begin = {0, pick(0, 3), pick(0, 2)};
                               p.pad_end = {0, pick(0, 2), pick(0, 3)};
                               p.direction = Direction::backward_weights;
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
                               return p;
                             }),
            45);
  // Long reductions over few tiles (batch 6-8 of 30x30 to 40x40: 84 to 200 stages, split in 10
  // to 25 ranges), K and C over a tile.
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_bwd_weights", 6,
                             [](auto pick, int i) {
                               Problem p;
                               p.n = pick(6, 8);
                               p.k = 8 * pick(1, 20);
                               p.c = 8 * pick(1, 20);
                               p.input = {1, pick(30, 40), pick(30, 40)};
                               p.filter = {1, 3, 3};
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.direction = Direction::backward_weights;
                               p.dtype = i % 2 ? DType::bf16 : DType::f16;
                               p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
                               return p;
                             }),
            6);
  // More tiles than SMs (on the H100/H200 144 and 142 of 128 columns), pixel counts off the stage
  // (98, 162): C of 1024 takes the bulk-copy kernel's 192-wide tiles (96 in one wave), C of 1000
  // (not a multiple of 64: no bulk copies) the cp.async kernel's 32-pixel stages, two blocks per
  // SM.
  EXPECT_EQ(verify_on_shapes("gpu:wgmma_bwd_weights", 2,
                             [](auto, int i) {
                               Problem p;
                               p.n = 2;
                               p.k = 256;
                               p.c = i ? 1000 : 1024;
                               p.input = {1, i ? 9 : 7, 9};
                               p.filter = {1, 3, 3};
                               p.pad_begin = p.pad_end = {0, 1, 1};
                               p.direction = Direction::backward_weights;
                               p.dtype = i ? DType::bf16 : DType::f16;
                               p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
                               return p;
                             }),
            2);
}

// What gpu:wgmma_bwd_weights declines, each with its reason (checked before the device: no GPU
// needed), and that it takes odd sizes, stride, dilation and padding.
TEST(Gpu, WgmmaBackwardWeightsDeclinesWithReasons) {
  const Solver* s = find_solver("gpu:wgmma_bwd_weights");
  if (!s) GTEST_SKIP() << "no CUDA backend in this build";
  const std::string nhwc = "--dt=bf16 --stag=axb --wtag=axb --dtag=axb ";
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {nhwc + "mb2ic64ih14oc64oh14kh3ph1", "backward-weights only"},
           {"--dir=BWD_D " + nhwc + "mb2ic64ih14oc64oh14kh3ph1", "backward-weights only"},
           {"--dir=BWD_W " + nhwc + "mb2ic3id6ih6iw6oc16od4oh4ow4kd3kh3kw3", "3D with C or K"},
           {"--dir=BWD_W " + nhwc + "mb2ic64id6ih6iw6oc20od4oh4ow4kd3kh3kw3", "gpu:tc_bwd_weights"},
           {"--dir=BWD_W " + nhwc + "g2mb2ic64ih14oc64oh14kh3ph1", "one group only"},
           {"--dir=BWD_W --dt=bf16 mb2ic64ih14oc64oh14kh3ph1", "dense NHWC"},
           {"--dir=BWD_W --stag=axb --wtag=axb --dtag=axb mb2ic64ih14oc64oh14kh3ph1",
            "f16/bf16"}}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    const Status st = s->check(*p);
    EXPECT_EQ(st.code(), StatusCode::not_applicable) << text;
    EXPECT_NE(st.message().find(why), std::string::npos) << text << ": " << st.message();
  }
  if (!wgmma_here()) return;  // the rest needs the device's answer
  for (const std::string& text : std::vector<std::string>{
           "--dir=BWD_W " + nhwc + "mb3ic24ih17oc40oh9kh3sh2ph1",
           "--dir=BWD_W " + nhwc + "mb1ic8ih13oc8oh9kh3dh1",
           "--dir=BWD_W --dt=f16 --stag=axb --wtag=axb --dtag=axb mb2ic16ih15oc8oh17kh1ph1",
           "--dir=BWD_W " + nhwc + "mb2ic64id6oc64od6kd3pd1"}) {  // 3D: tests/test_gpu_3d.cpp
    auto ok = parse_problem(text);
    ASSERT_TRUE(ok.is_ok()) << text << ": " << ok.status().message();
    EXPECT_TRUE(s->check(*ok).is_ok()) << text << ": " << s->check(*ok).message();
  }
}

// The ragged channel path and strided backward-data on fixed shapes, every direction, f16 and
// bf16 (and TF32 forward and backward-data): C = 3 first layers (3x3, and 7x7 stride 2 as
// ResNet's conv1), C and K of 5, 12, 20, 36 (and 3 or 64 against them), stride-2 backward-data
// 1x1, 3x3 pad 1 and 7x7 pad 3, on odd sizes too. Verified against the full fp64 reference.
TEST(Gpu, TensorCoreRaggedChannelsAndStridedBackwardData) {
  REQUIRE_GPU();
  const std::string nhwc = "--stag=axb --wtag=axb --dtag=axb ";
  std::vector<std::pair<std::string, std::string>> cases;  // solver, problem
  auto add = [&](const std::string& dir, const std::string& dt, const std::string& desc) {
    const std::string solver = dir == "--dir=BWD_W " ? "gpu:tc_bwd_weights"
                               : dt.empty()          ? "gpu:tc_implicit_gemm:tf32"
                                                     : "gpu:tc_implicit_gemm";
    cases.emplace_back(solver, dir + dt + nhwc + desc);
  };
  for (const std::string dt : {"--dt=f16 ", "--dt=bf16 ", ""}) {
    const bool tf32 = dt.empty();
    add("", dt, "mb2ic3ih32oc64oh32kh3ph1");
    add("", dt, "mb2ic3ih64oc64oh32kh7sh2ph3");
    add("", dt, "mb3ic3ih33oc24oh17kh3sh2ph1");
    for (const char* dir : {"", "--dir=BWD_D ", "--dir=BWD_W "}) {
      if (tf32 && std::string(dir) == "--dir=BWD_W ") continue;
      for (const char* ck :
           {"ic5ih13oc12oh13kh3ph1", "ic12ih13oc20oh13kh3ph1", "ic20ih13oc36oh13kh3ph1",
            "ic36ih13oc5oh13kh3ph1", "ic3ih16oc64oh16kh3ph1", "ic64ih16oc3oh16kh3ph1",
            "ic5ih9oc5oh9kh1", "ic20ih17oc12oh9kh3sh2ph1"})
        add(dir, dt, std::string("mb2") + ck);
    }
    for (const char* strided :
         {"mb2ic64ih28oc32oh14kh1sh2", "mb2ic32ih28oc64oh14kh3sh2ph1",
          "mb2ic16ih56oc24oh28kh7sh2ph3", "mb2ic24ih27oc40oh14kh3sh2ph1",
          "mb2ic3ih30oc20oh15kh7sh2ph3", "mb1ic12ih29oc20oh10kh2sh3", "mb2ic40ih20oc8oh10kh2sh2",
          "mb2ic16ih15oc16oh8kh3sh2ph1iw21ow7kw1sw3pw0"})
      add("--dir=BWD_D ", dt, strided);
  }
  int verified = 0;
  for (const auto& [solver, text] : cases) {
    const Solver* s = find_solver(solver);
    ASSERT_NE(s, nullptr) << solver;
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
    TrialTensors t(*p);
    fill_inputs(*p, t, 11, FillMode::uniform);
    const TrialResult r = gpu::run_trial(*s, *p, t, TrialOptions{});
    EXPECT_TRUE(r.ran()) << solver << " " << text << ": " << r.status.message();
    EXPECT_TRUE(!r.ran() || (r.verdict && r.verdict->ok))
        << solver << " " << text << ": " << (r.verdict ? r.verdict->message : "no verdict");
    verified += r.ran() && r.verdict && r.verdict->ok;
  }
  std::printf("ragged channels and strided backward-data: %d of %zu verified\n", verified,
              cases.size());
}

// Backward-weights reduces its splits in a fixed order: two runs on the same inputs give the
// same bits (a split problem: one output tile, 3136 stages of 32 pixels for gpu:tc_bwd_weights,
// 1568 of 64 for gpu:wgmma_bwd_weights on Hopper).
TEST(Gpu, TensorCoreBackwardWeightsIsDeterministic) {
  REQUIRE_GPU();
  auto bf16 = parse_problem(
      "--dir=BWD_W --dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic64ih56oc64oh56kh3ph1");
  ASSERT_TRUE(bf16.is_ok());
  Problem f32 = *bf16;  // the TF32 variant's (6272 stages of 16 pixels)
  f32.dtype = DType::f32;
  for (const char* id :
       {"gpu:tc_bwd_weights", "gpu:tc_bwd_weights:tf32", "gpu:wgmma_bwd_weights"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    if (std::string_view(id) == "gpu:wgmma_bwd_weights" && !wgmma_here()) continue;
    const Problem* p = is_tf32_variant(id) ? &f32 : &*bf16;
    auto ws = s->workspace_bytes(*p);
    ASSERT_TRUE(ws.is_ok()) << id;
    EXPECT_GT(*ws, 0u) << id << ": expected a split reduction";
    const auto out = convguard::testing::two_runs(*s, *p);
    ASSERT_EQ(out.size(), 2u) << id;
    EXPECT_TRUE(out[0] == out[1]) << id << ": two runs differ";
  }
}

// The TF32 variant really computes in TF32: its output is further from the fp64 reference than
// fp32 arithmetic allows, and within the TF32 tolerance (so the wider tolerance is needed, and
// a TF32 result is never recorded as fp32-accurate). Forward for the implicit GEMMs,
// backward-weights for gpu:tc_bwd_weights:tf32. (The tolerance admits truncated operands too,
// as gpu:wgmma_implicit_gemm:tf32 has them: this does not tell rounding from truncation.)
TEST(Gpu, Tf32VariantIsNotFp32Accurate) {
  REQUIRE_GPU();
  for (const char* id :
       {"gpu:tc_implicit_gemm:tf32", "gpu:wgmma_implicit_gemm:tf32", "gpu:tc_bwd_weights:tf32"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    auto p = parse_problem(
        std::string(std::string_view(id).starts_with("gpu:tc_bwd") ? "--dir=BWD_W " : "") +
        "--stag=axb --wtag=axb --dtag=axb mb2ic64ih16oc64oh16kh3ph1");
    ASSERT_TRUE(p.is_ok());
    if (const Status st = s->check(*p); !st) {
      // Only the wgmma variant off Hopper may decline it; on Hopper that is a regression.
      const bool wgmma = std::string_view(id).starts_with("gpu:wgmma");
      if (wgmma && !wgmma_here()) {
        std::printf("%s: %s\n", id, st.message().c_str());
        continue;
      }
      ADD_FAILURE() << id << " declined " << to_canonical(*p) << ": " << st.message();
      continue;
    }
    TrialTensors t(*p);
    fill_inputs(*p, t, 3, FillMode::uniform);
    const TrialResult r = gpu::run_trial(*s, *p, t, TrialOptions{});
    ASSERT_TRUE(r.ran() && r.verdict) << id << ": " << r.status.message();
    EXPECT_TRUE(r.verdict->ok) << id << ": " << r.verdict->message;
    EXPECT_GT(r.verdict->rel_error, tolerance_for(*p, Accuracy{}))
        << id << ": no TF32 rounding seen: relative error " << r.verdict->rel_error;
    std::printf("%s: TF32 relative error %.3g (fp32 tolerance %.3g, its tolerance %.3g)\n", id,
                r.verdict->rel_error, tolerance_for(*p, Accuracy{}), r.verdict->tolerance);
  }
}

// Winograd's shapes: 3x3, stride 1, forward and backward-data, with tile edges (sizes not
// multiples of the 8x16 block), asymmetric padding up to 3 (backward-data's 2 - pad < 0 too),
// groups, both layouts, every dtype.
TEST(Gpu, WinogradOnItsShapes) {
  REQUIRE_GPU();
  const int verified = verify_on_shapes("gpu:winograd", 80, [](auto pick, int i) {
    Problem p;
    p.n = pick(1, 3);
    p.g = pick(1, 3);
    p.c = p.g * pick(1, 20);
    p.k = p.g * pick(1, 24);
    p.input = {1, pick(1, 37), pick(1, 37)};
    p.filter = {1, 3, 3};
    p.pad_begin = {0, pick(0, 3), pick(0, 3)};
    p.pad_end = {0, pick(0, 3), pick(0, 3)};
    p.direction = i % 2 ? Direction::backward_data : Direction::forward;
    p.dtype = i % 3 == 0 ? DType::f32 : i % 3 == 1 ? DType::f16 : DType::bf16;
    p.x_layout = p.w_layout = p.y_layout = i % 4 < 2 ? Layout::nchw : Layout::nhwc;
    return p;
  });
  EXPECT_GT(verified, 50);
}

// The direct solver's tiles: large strides and dilations (backward-data's stride grid),
// filters up to 7 (backward-weights' row segments), 3D, groups, every direction.
TEST(Gpu, DirectOnItsShapes) {
  REQUIRE_GPU();
  const int verified = verify_on_shapes("gpu:direct", 90, [](auto pick, int i) {
    Problem p;
    const bool three_d = i % 5 == 0;
    p.spatial_dims = three_d ? 3 : 2;
    p.n = pick(1, 3);
    p.g = pick(1, 2);
    p.c = p.g * pick(1, 12);
    p.k = p.g * pick(1, 12);
    p.input = {three_d ? pick(1, 9) : 1, pick(1, 45), pick(1, 45)};
    p.filter = {three_d ? pick(1, 3) : 1, pick(1, 7), pick(1, 7)};
    p.stride = {three_d ? pick(1, 2) : 1, pick(1, 4), pick(1, 4)};
    p.dilation = {three_d ? pick(1, 2) : 1, pick(1, 3), pick(1, 3)};
    p.pad_begin = {0, pick(0, 3), pick(0, 3)};
    p.pad_end = {0, pick(0, 3), pick(0, 3)};
    p.direction = static_cast<Direction>(i % 3);
    p.dtype = i % 3 == 1 ? DType::f32 : i % 2 ? DType::f16 : DType::bf16;
    p.x_layout = p.w_layout = p.y_layout = i % 4 < 2 ? Layout::nchw : Layout::nhwc;
    return p;
  });
  EXPECT_GT(verified, 40);
}
