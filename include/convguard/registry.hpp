// Solver lists. Each backend has one ordered list (src/<backend>/solver_list.cpp); the order is
// the default preference when nothing has been measured. A new solver is one file pair plus one
// line in its backend's list.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "convguard/solver.hpp"

namespace convguard {

std::span<const Solver* const> cpu_solvers();
// Every solver of every backend this build has, in preference order.
// The solvers whose tensors live on `d` (all_solvers() in order, filtered).
std::vector<const Solver*> solvers_on(Device d);
std::vector<const Solver*> all_solvers();
// A solver by id: one of all_solvers(), or a transform around one (xform:tile(32x32):cpu:direct,
// docs/transforms.md), built on first use and kept for the life of the process. nullptr when the
// id names nothing; resolve_solver says why.
const Solver* find_solver(std::string_view id);
[[nodiscard]] Result<const Solver*> resolve_solver(std::string_view id);

// True when `id` matches a glob in CONVGUARD_SKIP_SOLVERS (comma-separated; `convguard env`
// writes it from the evidence). Such solvers are never chosen automatically; naming one
// explicitly (driver -S ID) still runs it.
bool skipped_by_environment(std::string_view id);

}  // namespace convguard
