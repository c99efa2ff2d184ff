// Determinism across thread counts, for the CPU families whose work split follows the thread count
// but whose sums must not: the same output bits with 1, 2, 3 and again 2 OpenMP threads.
#pragma once

#include <gtest/gtest.h>
#include <omp.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "convguard/dtype.hpp"
#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::testing {

// OpenMP's thread count for a scope, the previous one restored however the scope ends (an
// ASSERT's early return included).
struct ThreadCount {
  int before = omp_get_max_threads();
  explicit ThreadCount(int n) { omp_set_num_threads(n); }
  ~ThreadCount() { omp_set_num_threads(before); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;
};

// Runs `s` on p (inputs filled with seed 7, uniform) at each thread count and expects the output's
// bytes to equal the 1-thread run's; `what` names the case in failures. A problem declined for
// this CPU's ISA (or CONVGUARD_CPU_ISA) is skipped; any other decline fails, unless
// `may_decline` (the caller knows the solver does not compute it).
inline void expect_same_bits_on_every_thread_count(const Solver& s, const Problem& p,
                                                   const std::string& what,
                                                   bool may_decline = false) {
  if (const Status st = s.check(p); !st) {
    const std::string& why = st.message();
    EXPECT_TRUE(may_decline || why.find("CPU") != std::string::npos ||
                why.find("CONVGUARD_CPU_ISA") != std::string::npos)
        << what << " declined: " << why;
    return;
  }
  TrialTensors t(p);
  fill_inputs(p, t, 7, FillMode::uniform);
  std::vector<std::byte> ws(*s.workspace_bytes(p));
  auto plan = s.plan(p);
  ASSERT_TRUE(plan.is_ok()) << what;
  const ConvTensors views = t.view();
  const TensorView& out = output_of(p, views);
  const std::size_t bytes = static_cast<std::size_t>(out.desc.span()) * size_of(out.desc.dtype);
  const auto bits = [&](int threads) {
    // Poisoned first (NaN in every float and bf16): an element a run leaves unwritten would
    // otherwise keep the previous run's value and pass.
    std::memset(out.data, 0xff, bytes);
    const ThreadCount team(threads);
    EXPECT_TRUE(s.run(**plan, views, ws).is_ok()) << what;
    const auto* b = static_cast<const std::byte*>(out.data);
    return std::vector<std::byte>(b, b + bytes);
  };
  const std::vector<std::byte> one = bits(1);
  for (const int n : {2, 3, 2}) EXPECT_EQ(bits(n), one) << what << ": " << n << " threads";
}

}  // namespace convguard::testing
