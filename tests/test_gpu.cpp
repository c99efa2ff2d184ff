// GPU tests (ctest label gpu): every GPU solver verifies on the random property set, gpu:naive
// (the device reference) matches the host fp64 reference, larger layers verify by sampling.
// Without a GPU every test is skipped with the reason (CI has none); docs/perf.md and
// docs/gpu.md record the runs on the H100.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "gpu/gpu.hpp"
#include "random_problem.hpp"

using namespace convguard;

namespace {

bool have_gpu() {
  static const bool ok = gpu::device_count() > 0 && gpu::open_device(0).is_ok();
  return ok;
}

#define REQUIRE_GPU()                                                                      \
  if (!have_gpu())                                                                         \
  GTEST_SKIP() << "no GPU here (" << gpu::backend() << " backend, " << gpu::device_count() \
               << " devices): GPU tests skipped"

}  // namespace

TEST(Gpu, EverySolverMatchesTheReferenceOnRandomProblems) {
  REQUIRE_GPU();
  std::uint64_t first = 1, count = 400;
  if (const char* s = std::getenv("CONVGUARD_PROPERTY_SEED")) {
    first = std::strtoull(s, nullptr, 10);
    count = 1;
  }
  std::map<std::string, int> verified;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    const Problem p = convguard::testing::random_problem(seed);
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
    // the tensor-core solver's shapes (C, K multiples of 8, NHWC) have their own test below.
    if (count > 1 && s->id() != "gpu:tc_implicit_gemm") {
      EXPECT_GT(verified[std::string(s->id())], 0) << s->id();
    }
  }
}

TEST(Gpu, LargeLayersVerifyBySampling) {
  REQUIRE_GPU();
  for (const char* text :
       {"mb32ic64ih56oc64oh56kh3ph1", "--dir=BWD_D mb32ic64ih56oc64oh56kh3ph1",
        "--dir=BWD_W mb32ic64ih56oc64oh56kh3ph1",
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih14oc256oh14kh3ph1",
        // ResNet-50's last stage: few output tiles, so the tensor-core
        // solver splits the reduction (split-K)
        "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic512ih7oc512oh7kh3ph1",
        "--dt=f16 --stag=axb --wtag=axb --dtag=axb mb1ic256ih14oc256oh14kh3ph1"}) {
    auto p = parse_problem(text);
    ASSERT_TRUE(p.is_ok()) << text;
    TrialTensors t(*p);
    fill_inputs(*p, t, 7, FillMode::uniform);
    for (const Solver* s : solvers_on(Device::gpu)) {
      TrialOptions o;
      o.full_reference_limit = 0;  // sampled: these are too large for a full host reference
      const TrialResult r = gpu::run_trial(*s, *p, t, o);
      if (r.status.code() == StatusCode::not_applicable) continue;
      ASSERT_TRUE(r.ran()) << s->id() << " " << text << ": " << r.status.message();
      EXPECT_TRUE(r.verdict && r.verdict->ok)
          << s->id() << " " << text << ": " << (r.verdict ? r.verdict->message : "");
    }
  }
}

// Random shapes the tensor-core solver accepts: edges of every tile dimension (M, N and the
// reduction not multiples of 128/128/32), stride, dilation, padding, odd sizes, f16 and bf16.
TEST(Gpu, TensorCoreSolverOnItsShapes) {
  REQUIRE_GPU();
  const Solver* tc = find_solver("gpu:tc_implicit_gemm");
  ASSERT_NE(tc, nullptr);
  std::mt19937_64 rng(42);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  int verified = 0;
  for (int i = 0; i < 60; ++i) {
    Problem p;
    p.n = pick(1, 4);
    p.c = 8 * pick(1, 12);
    p.k = 8 * pick(1, 40);
    p.input = {1, pick(1, 40), pick(1, 40)};
    p.filter = {1, pick(1, 5), pick(1, 5)};
    p.stride = {1, pick(1, 2), pick(1, 2)};
    p.dilation = {1, pick(0, 4) == 0 ? 2 : 1, 1};
    p.pad_begin = {0, pick(0, 2), pick(0, 2)};
    p.pad_end = p.pad_begin;
    p.dtype = i % 2 ? DType::bf16 : DType::f16;
    p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
    if (!validate(p).is_ok()) continue;
    TrialTensors t(p);
    fill_inputs(p, t, static_cast<std::uint64_t>(i) + 1, FillMode::uniform);
    const TrialResult r = gpu::run_trial(*tc, p, t, TrialOptions{});
    ASSERT_TRUE(r.ran()) << to_canonical(p) << ": " << r.status.message();
    ASSERT_TRUE(r.verdict && r.verdict->ok)
        << to_canonical(p) << ": " << (r.verdict ? r.verdict->message : "no verdict");
    ++verified;
  }
  std::printf("gpu:tc_implicit_gemm         verified on %d problems\n", verified);
  EXPECT_GT(verified, 40);
}
