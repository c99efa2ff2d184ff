#include "probe/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "convguard/canonical.hpp"
#include "core/safe_text.hpp"

namespace convguard::probe {
namespace {

// A trial's fixed cost in FLOP-equivalents (~10 ms at the 10 GFLOP/s of a small direct run).
constexpr double kTrialOverheadFlops = 1e8;
constexpr long kMaxShards = 1000000;

// A whole number 0..kMaxShards, digits only (no sign, no spaces, no "1e3"); else -1.
long whole(const std::string& t) {
  return digits_only(t, kMaxShards).value_or(-1);
}

}  // namespace

Result<Shard> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const long i = whole(text.substr(0, slash));
  const long n = slash == std::string::npos ? -1 : whole(text.substr(slash + 1));
  if (i < 0 || n < 0)
    return invalid_argument(fmt::format("'{}' is not I/N (shard I of N, e.g. 2/4)", text));
  if (n < 1 || i < 1 || i > n)
    return invalid_argument(fmt::format("'{}': I must be 1 to N and N at least 1", text));
  return Shard{static_cast<int>(i), static_cast<int>(n)};
}

Result<std::optional<Shard>> shard_from_slurm(const std::function<const char*(const char*)>& get) {
  const char* id_text = get("SLURM_ARRAY_TASK_ID");
  if (!id_text) return std::optional<Shard>();
  // Each variable: absent (its default, or an error when it has none) or a whole number.
  const auto read = [&](const char* name, std::optional<long> fallback) -> Result<long> {
    const char* v = get(name);
    if (!v) {
      if (fallback) return *fallback;
      return invalid_argument(fmt::format(
          "{} is not set, but SLURM_ARRAY_TASK_ID is (not a Slurm job array? give --shard I/N)",
          name));
    }
    if (const long n = whole(v); n >= 0) return n;
    return invalid_argument(fmt::format("{}='{}' is not a whole number", name, v));
  };
  auto id = read("SLURM_ARRAY_TASK_ID", std::nullopt);
  if (!id) return id.status();
  auto count = read("SLURM_ARRAY_TASK_COUNT", std::nullopt);
  if (!count) return count.status();
  auto min = read("SLURM_ARRAY_TASK_MIN", 0L);
  if (!min) return min.status();
  auto step = read("SLURM_ARRAY_TASK_STEP", 1L);
  if (!step) return step.status();
  if (*count < 1) return invalid_argument("SLURM_ARRAY_TASK_COUNT: must be at least 1");
  if (*step < 1) return invalid_argument("SLURM_ARRAY_TASK_STEP: must be at least 1");
  const long last = *min + (*count - 1) * *step;
  auto max = read("SLURM_ARRAY_TASK_MAX", last);
  if (!max) return max.status();
  if (*max != last) {
    return invalid_argument(fmt::format(
        "SLURM_ARRAY_TASK_MIN={}, _MAX={}, _STEP={} and _COUNT={} are not a regular range (an "
        "array such as --array=1,2,7)",
        *min, *max, *step, *count));
  }
  if (*id < *min || *id > last || (*id - *min) % *step != 0) {
    return invalid_argument(fmt::format(
        "SLURM_ARRAY_TASK_ID={} is not one of the array's tasks ({} to {} in steps of {}, from "
        "SLURM_ARRAY_TASK_MIN, _COUNT and _STEP)",
        *id, *min, last, *step));
  }
  return std::optional<Shard>(
      Shard{static_cast<int>((*id - *min) / *step + 1), static_cast<int>(*count)});
}

double trial_cost(const Problem& p) {
  return p.flops() + kTrialOverheadFlops;
}

std::vector<std::size_t> shard_problems(const std::vector<Problem>& problems, const Shard& s) {
  // Identical problems are one unit, keyed by what the database keys them by.
  std::map<std::string, double> cost;
  std::vector<std::string> keys;
  for (const Problem& p : problems) {
    keys.push_back(identity_string(p));
    cost.emplace(keys.back(), trial_cost(p));
  }
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [key, c] : cost) order.emplace_back(c, key);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<double> load(static_cast<std::size_t>(s.count), 0.0);
  std::map<std::string, int> shard_of;
  for (const auto& [c, key] : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    load[static_cast<std::size_t>(least)] += c;
    shard_of[key] = static_cast<int>(least) + 1;
  }
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < problems.size(); ++i)
    if (shard_of[keys[i]] == s.index) mine.push_back(i);
  return mine;
}

}  // namespace convguard::probe
