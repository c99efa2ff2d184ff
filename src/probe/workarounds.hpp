// Which transforms the probe tries, and in what order, when plain solvers fail (probe
// --workarounds, docs/transforms.md). Candidates come from the evidence: the plain solvers that
// hung, crashed, returned wrong values or declined a problem are wrapped, and a solver that hung
// is tiled first, below the largest size it is known to have passed on the same shape (the
// failure boundary, from other trials or `convguard bisect`), else at halves of the problem.
// Cheaper transforms (a relayout, a few padded channels or rows) come first otherwise.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convguard/problem.hpp"
#include "db/store.hpp"

namespace convguard::probe {

enum class WorkaroundMode {
  off,
  automatic,  // only for problems no plain solver verified; stop at the first that verifies
  all,        // around every plain solver, every problem; all of them run (timings compared)
};
std::optional<WorkaroundMode> parse_workaround_mode(std::string_view text);

// The transform ids to try for p, in order (empty: none needed or none applies). `plain` are
// the plain solvers the probe tried on this device; their records must already be stored.
std::vector<std::string> workaround_candidates(const Problem& p,
                                               const std::vector<std::string>& plain,
                                               db::Store& store, const std::string& fingerprint,
                                               WorkaroundMode mode);

// The largest spatial input sizes below p's at which `solver` verified on a problem that
// differs from p only in its spatial sizes (the known failure boundary), if any.
std::optional<Dims3> largest_ok_size(const Problem& p, const std::string& solver, db::Store& store,
                                     const std::string& fingerprint);

}  // namespace convguard::probe
