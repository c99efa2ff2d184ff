// Shards: one job's deterministic share of a sweep (`convguard probe --shard I/N`, or a Slurm job
// array's SLURM_ARRAY_TASK_* variables), so a sweep spreads across nodes with no coordinator:
// every job computes the same split from the same problem list and runs its own part.
//
// Balanced by estimated cost, not by count: a suite's problems span orders of magnitude of FLOPs,
// and N equal counts can leave one job with every large layer. A problem goes whole to one shard
// (all its solvers: a worker computes a problem's reference once, and workarounds read the
// problem's plain results from the shard's own database), and identical problems go to the same
// shard, so no trial runs in two. Greedy, largest first: problems sorted by cost (ties by
// canonical string), each to the shard with the least cost so far (the lowest index on ties).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"

namespace convguard::probe {

struct Shard {
  int index = 1, count = 1;  // shard `index` (1-based) of `count`
};

// "I/N" with 1 <= I <= N. Messages do not name the flag: the caller does.
[[nodiscard]] Result<Shard> parse_shard(const std::string& text);

// The shard of a Slurm job array task: (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / STEP + 1 of
// SLURM_ARRAY_TASK_COUNT; nullopt when SLURM_ARRAY_TASK_ID is not set. An array that is not a
// regular range (`--array=1,2,7`) is refused: its tasks cannot say which share is whose. Messages
// name the variable. `get` reads one (std::getenv; tests pass their own).
[[nodiscard]] Result<std::optional<Shard>> shard_from_slurm(
    const std::function<const char*(const char*)>& get);

// A problem's estimated cost per trial: its FLOPs plus a fixed cost per trial (a worker round
// trip, planning), so that small problems are not free.
double trial_cost(const Problem& p);

// The indices of the problems in shard `s`, in their original order.
std::vector<std::size_t> shard_problems(const std::vector<Problem>& problems, const Shard& s);

}  // namespace convguard::probe
