#include "db/select.hpp"

#include <fmt/format.h>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"

namespace convguard::db {

Result<Selection> select_solver(Store& store, const std::string& device, const Problem& p) {
  if (auto st = validate(p); !st) return st;
  const std::string key = identity_string(p);
  Selection best;
  double best_ms = 0;
  int verified = 0;
  std::vector<std::string> bad;
  const Solver* fallback = nullptr;
  for (const Solver* s : solvers_on(Device::cpu)) {
    if (skipped_by_environment(s->id())) continue;
    const auto rec = store.find(device, key, std::string(s->id()));
    if (rec) ++best.evidence;
    if (rec && (rec->status == "hang" || rec->status == "crash" || rec->status == "wrong")) {
      bad.push_back(fmt::format("{} ({})", s->id(), rec->status));
      continue;
    }
    if (rec && rec->status == "ok") {
      ++verified;
      if (!best.solver || rec->median_ms < best_ms) {
        best.solver = s;
        best_ms = rec->median_ms;
      }
      continue;
    }
    // No usable evidence: a candidate for the list-order fallback (cpu:ref only as the last).
    if (!fallback && s->id() != "cpu:ref" && s->check(p).is_ok() &&
        (!rec || rec->status != "unsupported")) {
      fallback = s;
    }
  }
  // Workarounds recorded for this problem (transforms are built from their ids, not listed).
  for (const TrialRecord& r : store.for_problem(device, key)) {
    if (r.solver.rfind("xform:", 0) != 0 || skipped_by_environment(r.solver)) continue;
    const Solver* s = find_solver(r.solver);
    if (!s || s->device() != Device::cpu) continue;
    ++best.evidence;
    if (r.status == "hang" || r.status == "crash" || r.status == "wrong") {
      bad.push_back(fmt::format("{} ({})", r.solver, r.status));
    } else if (r.status == "ok") {
      ++verified;
      if (!best.solver || r.median_ms < best_ms) {
        best.solver = s;
        best_ms = r.median_ms;
      }
    }
  }
  std::string bad_text;
  for (const auto& b : bad) bad_text += (bad_text.empty() ? "" : ", ") + b;
  const std::string avoided = bad.empty() ? "" : "; avoided, recorded bad here: " + bad_text;
  if (best.solver) {
    const bool workaround = best.solver->id().substr(0, 6) == "xform:";
    best.why = fmt::format(
        "fastest verified on this device: {}{} at {:.3f} ms (median), of {} verified{}",
        workaround ? "the workaround " : "", best.solver->id(), best_ms, verified, avoided);
    return best;
  }
  if (!fallback) fallback = find_solver("cpu:ref");
  best.solver = fallback;
  best.why = fmt::format(
      "no verified result for this problem on this device: first applicable solver in list order{}",
      avoided);
  return best;
}

}  // namespace convguard::db
