// The property tests' problem generator (CPU and GPU): small random problems covering 1D/2D/3D,
// every direction, groups and depthwise, stride, dilation, asymmetric padding, every layout and
// explicit strides, fp32/fp16/bf16, odd sizes 17 and 33. Deterministic per seed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/problem.hpp"
#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::testing {

inline std::vector<std::int64_t> gapped_strides(const TensorDesc& d, std::mt19937_64& rng) {
  // Dense strides of the descriptor's own order, with a gap added to one dimension.
  std::vector<std::int64_t> s(d.strides.begin(), d.strides.begin() + d.rank);
  std::vector<int> order(static_cast<std::size_t>(d.rank));
  for (int i = 0; i < d.rank; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return s[a] < s[b]; });
  const int widen = static_cast<int>(rng() % static_cast<std::uint64_t>(d.rank));
  std::int64_t extent = 1;
  for (int pos = 0; pos < d.rank; ++pos) {
    const int i = order[static_cast<std::size_t>(pos)];
    s[static_cast<std::size_t>(i)] = extent + (pos == widen ? 3 : 0);
    extent = s[static_cast<std::size_t>(i)] * d.dims[i];
  }
  return s;
}

// Explicit strides as the problem takes them: a 1D problem's are N,C,W (its descriptors' unit H
// dropped; that H sits between C and W in stride order, so the others stay non-overlapping).
inline std::vector<std::int64_t> written_strides(const Problem& p, std::vector<std::int64_t> s) {
  if (p.spatial_dims == 1) s.erase(s.begin() + 2);
  return s;
}

// One in five 2D problems becomes 1D (its height made a unit dimension), drawn from a stream of
// its own so the 2D and 3D problems of each seed stay what they were before 1D existed.
inline void maybe_make_1d(Problem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x1d1d1d1dULL);
  if (p.spatial_dims != 2 || rng() % 5 != 0) return;
  p.spatial_dims = 1;
  p.input[1] = p.filter[1] = p.stride[1] = p.dilation[1] = 1;
  p.pad_begin[1] = p.pad_end[1] = 0;
}

inline Problem random_problem(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  for (;;) {
    Problem p;
    p.spatial_dims = pick(0, 9) < 3 ? 3 : 2;
    const int kind = static_cast<int>(pick(0, 9));
    if (kind < 2) {  // depthwise
      p.g = pick(1, 6);
      p.c = p.k = p.g;
    } else {
      p.g = kind < 4 ? pick(2, 3) : 1;
      p.c = p.g * pick(1, 5);
      p.k = p.g * pick(1, 5);
    }
    p.n = pick(1, 3);
    for (int d = 3 - p.spatial_dims; d < 3; ++d) {
      const bool big = pick(0, 7) == 0 && p.spatial_dims == 2;
      p.input[d] = big ? (pick(0, 1) ? 17 : 33) : pick(1, p.spatial_dims == 3 ? 6 : 10);
      p.filter[d] = pick(1, 4);
      p.stride[d] = pick(0, 3) == 0 ? pick(2, 3) : 1;
      p.dilation[d] = pick(0, 4) == 0 ? 2 : 1;
      p.pad_begin[d] = pick(0, 2);
      p.pad_end[d] = pick(0, 2);
    }
    // Winograd and FFT shapes deserve frequent coverage: 3x3 stride-1 2D.
    if (p.spatial_dims == 2 && pick(0, 3) == 0) {
      p.filter = {1, 3, 3};
      p.stride = {1, 1, 1};
      p.dilation = {1, 1, 1};
    }
    p.direction = static_cast<Direction>(pick(0, 2));
    p.dtype = static_cast<DType>(pick(0, 2));
    p.x_layout = static_cast<Layout>(pick(0, 1));
    p.w_layout = static_cast<Layout>(pick(0, 1));
    p.y_layout = static_cast<Layout>(pick(0, 1));
    maybe_make_1d(p, seed);
    if (!validate(p).is_ok()) continue;
    if (pick(0, 5) == 0) p.x_strides = written_strides(p, gapped_strides(x_desc(p), rng));
    if (pick(0, 7) == 0) p.y_strides = written_strides(p, gapped_strides(y_desc(p), rng));
    if (pick(0, 9) == 0) p.w_strides = written_strides(p, gapped_strides(w_desc(p), rng));
    if (validate(p).is_ok()) return p;
  }
}

// Wide channels at small spatial sizes: the shapes where the vectorised kernels (AVX-512 implicit
// GEMM with K >= 32, backward-weights with K/G >= 8) take over, which random_problem's <= 5
// channels per group never reach. 1D, 2D and 3D, every direction, dtype and layout, groups of 1-2.
inline Problem random_wide_problem(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 13);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  static constexpr std::int64_t kWidths[] = {8, 16, 24, 32, 48, 64, 72, 96, 128, 256};
  auto width = [&] { return kWidths[pick(0, 9)]; };
  for (;;) {
    Problem p;
    p.spatial_dims = pick(0, 5) == 0 ? 3 : 2;
    p.g = pick(0, 4) == 0 ? 2 : 1;
    p.c = p.g * width() / (p.g == 2 ? 2 : 1);
    p.k = p.g * width() / (p.g == 2 ? 2 : 1);
    p.n = pick(1, 2);
    for (int d = 3 - p.spatial_dims; d < 3; ++d) {
      p.input[d] = pick(p.spatial_dims == 3 ? 2 : 3, p.spatial_dims == 3 ? 5 : 12);
      p.filter[d] = pick(0, 2) == 0 ? 1 : 3;
      p.stride[d] = pick(0, 3) == 0 ? 2 : 1;
      p.pad_begin[d] = p.pad_end[d] = p.filter[d] / 2;
    }
    p.direction = static_cast<Direction>(pick(0, 2));
    p.dtype = static_cast<DType>(pick(0, 2));
    p.x_layout = static_cast<Layout>(pick(0, 1));
    p.w_layout = static_cast<Layout>(pick(0, 1));
    p.y_layout = static_cast<Layout>(pick(0, 1));
    maybe_make_1d(p, seed);
    if (validate(p).is_ok()) return p;
  }
}

// The property tests' seeds: [1, 1 + count), or the one in CONVGUARD_PROPERTY_SEED (a replay).
inline std::pair<std::uint64_t, std::uint64_t> property_seeds(std::uint64_t count) {
  if (const char* s = std::getenv("CONVGUARD_PROPERTY_SEED"))
    return {std::strtoull(s, nullptr, 10), 1};
  return {1, count};
}

// One random case: the problem, its inputs filled (integers for odd seeds, where exact solvers
// must match exactly) and the trial options.
struct RandomCase {
  explicit RandomCase(std::uint64_t seed, bool wide = false)
      : p(wide ? random_wide_problem(seed) : random_problem(seed)), t(p) {
    o.fill = seed % 2 ? FillMode::integer : FillMode::uniform;
    o.seed = seed;
    fill_inputs(p, t, seed, o.fill);
  }
  Problem p;
  TrialTensors t;
  TrialOptions o;
};

// The bf16 variants that read the caller's tensors in place take dense channels-first bf16 only,
// which the property sets draw rarely: runs `s` on `seeds` random problems made so, in direction
// d, with an EXPECT on every verdict. Returns how many ran, and the last decline's reason.
struct DenseBf16Run {
  int verified = 0;
  std::string declined;
};
inline DenseBf16Run verify_on_dense_bf16(const Solver& s, Direction d, int seeds) {
  DenseBf16Run run;
  for (std::uint64_t seed = 1; seed <= static_cast<std::uint64_t>(seeds); ++seed) {
    Problem p = random_problem(seed);
    p.direction = d;
    p.dtype = DType::bf16;
    p.x_layout = p.y_layout = p.w_layout = Layout::nchw;
    p.x_strides.clear(), p.y_strides.clear(), p.w_strides.clear();
    if (const Status st = s.check(p); !st) {
      run.declined = st.message();
      continue;
    }
    TrialTensors t(p);
    TrialOptions o;
    o.fill = seed % 2 ? FillMode::integer : FillMode::uniform;
    fill_inputs(p, t, seed, o.fill);
    const TrialResult r = run_trial(s, p, t, o);
    EXPECT_TRUE(r.ran()) << r.status.to_string() << " " << to_canonical(p);
    EXPECT_TRUE(r.verdict && r.verdict->ok)
        << (r.verdict ? r.verdict->message : "") << " seed " << seed << " " << to_canonical(p);
    ++run.verified;
  }
  return run;
}

}  // namespace convguard::testing
