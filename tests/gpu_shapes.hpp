// A GPU solver verified on random shapes of its own (tests/test_gpu*.cpp): shared by the shape
// tests of every specialised GPU solver.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/staged_trial.hpp"
#include "gpu/gpu.hpp"

namespace convguard::testing {

// Verifies `solver` on `count` random problems from `make` (invalid draws skipped) and returns
// how many it verified; every problem must be accepted by check().
template <typename Make>
inline int verify_on_shapes(const char* solver, int count, Make&& make) {
  const Solver* s = find_solver(solver);
  EXPECT_NE(s, nullptr) << solver;
  if (!s) return 0;
  std::mt19937_64 rng(42);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  int verified = 0;
  for (int i = 0; i < count; ++i) {
    const Problem p = make(pick, i);
    if (!validate(p).is_ok()) continue;
    TrialTensors t(p);
    fill_inputs(p, t, static_cast<std::uint64_t>(i) + 1, FillMode::uniform);
    const TrialResult r = gpu::run_trial(*s, p, t, TrialOptions{});
    EXPECT_TRUE(r.ran()) << solver << " " << to_canonical(p) << ": " << r.status.message();
    EXPECT_TRUE(!r.ran() || (r.verdict && r.verdict->ok))
        << solver << " " << to_canonical(p) << ": "
        << (r.verdict ? r.verdict->message : "no verdict");
    verified += r.ran() && r.verdict && r.verdict->ok;
  }
  std::printf("%-28s verified on %d problems of its own\n", solver, verified);
  return verified;
}

// `text` on `s`, verified against the fp64 reference (by sampling on large layers).
inline void expect_verified(const Solver& s, const std::string& text) {
  auto p = parse_problem(text);
  ASSERT_TRUE(p.is_ok()) << text;
  TrialTensors t(*p);
  fill_inputs(*p, t, 7, FillMode::uniform);
  const TrialResult r = gpu::run_trial(s, *p, t, TrialOptions{});
  EXPECT_TRUE(r.ran() && r.verdict && r.verdict->ok)
      << s.id() << " " << text << ": " << (r.verdict ? r.verdict->message : r.status.message());
}

// Runs `s` on `p` twice on the device over the same inputs (seed 5), its output (y, x or w by
// direction) and its workspace poisoned before each run, and returns both outputs' bytes (none
// after a failure, which it reports): a solver's results must not depend on timing, so the two must
// be the same.
inline std::vector<std::vector<unsigned char>> two_runs(const Solver& s, const Problem& p) {
  TrialTensors t(p);
  fill_inputs(p, t, 5, FillMode::uniform);
  auto mem = gpu::device_memory();
  EXPECT_NE(mem, nullptr);
  if (!mem) return {};
  HostTensor* host[3] = {&t.x, &t.w, &t.y};
  const int out = p.direction == Direction::forward         ? 2
                  : p.direction == Direction::backward_data ? 0
                                                            : 1;
  const auto ws = s.workspace_bytes(p);
  auto plan = s.plan(p);
  bool ok = ws.is_ok() && plan.is_ok();
  void *dev[3] = {}, *scratch = nullptr;
  for (int i = 0; ok && i < 3; ++i)
    ok = mem->allocate(&dev[i], host[i]->bytes(), "t").is_ok() &&
         mem->copy_in(dev[i], host[i]->data(), host[i]->bytes()).is_ok();
  ok = ok && mem->allocate(&scratch, std::max<std::size_t>(*ws, 1), "ws").is_ok();
  std::vector<std::vector<unsigned char>> outs;
  for (int r = 0; ok && r < 2; ++r) {
    const ConvTensors d{{dev[0], t.x.desc()}, {dev[1], t.w.desc()}, {dev[2], t.y.desc()}};
    ok = mem->poison(dev[out], host[out]->bytes()).is_ok() &&
         (*ws == 0 || mem->poison(scratch, *ws).is_ok()) &&
         s.run(**plan, d, {static_cast<std::byte*>(scratch), *ws}).is_ok() &&
         mem->synchronize("run").is_ok();
    if (!ok) break;
    outs.emplace_back(host[out]->bytes());
    ok = mem->copy_out(outs.back().data(), dev[out], outs.back().size()).is_ok();
  }
  EXPECT_TRUE(ok) << s.id() << " " << to_canonical(p) << ": a step of the two runs failed";
  for (void* q : dev)
    if (q) mem->release(q);
  if (scratch) mem->release(scratch);
  if (!ok) outs.clear();
  return outs;
}

// A 2D NHWC problem of an r x s filter over an h x w input (the tensor-core shapes' common part).
inline Problem nhwc_problem(Direction d, DType t, int n, int c, int k, int h, int w, int r, int s) {
  Problem p;
  p.n = n, p.c = c, p.k = k;
  p.input = {1, h, w};
  p.filter = {1, r, s};
  p.direction = d;
  p.dtype = t;
  p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
  return p;
}

}  // namespace convguard::testing
