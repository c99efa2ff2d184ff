// convguard bisect: the size (or channel count, or batch) at which a solver's status changes,
// found with sandboxed trials (each one recorded like any probe trial). The search assumes one
// boundary in the range, as the seeds' failures have ("ok up to 42x42, hang from 43x43"); it
// says so when both ends agree, since a boundary inside would then be a pair of them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"

namespace convguard::probe {

// What varies: a set of spatial dims moved together (H,W or D,H,W), or C, K or N.
struct Vary {
  std::vector<int> spatial;  // dims 0..2 (D, H, W); empty for C/K/N
  char count = 0;            // 'C', 'K' or 'N'
};
// What varies when --vary is not given: H,W (in 3D too, D kept), W in 1D.
std::string default_vary(const Problem& p);
// "H,W", "D,H,W", "H", "W", "D", "C", "K" or "N" (empty: default_vary); the error names the flag.
[[nodiscard]] Result<Vary> parse_vary(const std::string& text, const Problem& p);
// p with the varied quantity set to v (input sizes; output sizes follow), or why not.
[[nodiscard]] Result<Problem> with_value(const Problem& p, const Vary& v, std::int64_t value);
// The smallest value that makes a valid problem, and p's own value.
std::int64_t smallest_value(const Problem& p, const Vary& v);
std::int64_t value_of(const Problem& p, const Vary& v);
// "42x42", "C=16", ...
std::string describe_value(const Problem& p, const Vary& v, std::int64_t value);

struct BisectStep {
  std::int64_t value = 0;
  std::string status;
};
struct BisectResult {
  bool found = false;            // the statuses at the two ends differ
  std::int64_t last_first = 0;   // the largest value with the status of `lo`
  std::int64_t first_other = 0;  // the smallest value after it with another status
  std::string first_status, other_status;
  std::vector<BisectStep> steps;  // in the order they ran
};

// Binary search over [lo, hi] with status_at (a sandboxed trial). Stops on the first error.
[[nodiscard]] Result<BisectResult> bisect(
    std::int64_t lo, std::int64_t hi,
    const std::function<Result<std::string>(std::int64_t)>& status_at);

}  // namespace convguard::probe
