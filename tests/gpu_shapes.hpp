// A GPU solver verified on random shapes of its own (tests/test_gpu*.cpp): shared by the shape
// tests of every specialised GPU solver.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>

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

}  // namespace convguard::testing
