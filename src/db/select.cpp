#include "db/select.hpp"

#include <fmt/format.h>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "transforms/parse.hpp"

namespace convguard::db {

namespace {

// The device's reference solver: correct everywhere, slowest; chosen only when nothing else is.
std::string_view reference_of(Device d) {
  return d == Device::gpu ? "gpu:naive" : d == Device::cpu ? "cpu:ref" : "";
}

}  // namespace

Result<Selection> select_solver(Store& store, const std::string& device, const Problem& p,
                                const SelectPolicy& policy) {
  if (auto st = validate(p); !st) return st;
  const std::string_view reference = reference_of(policy.device);
  const auto eligible = [&](const Solver* s) {
    return s->device() == policy.device &&
           (policy.device != Device::plugin || s->plugin_device() == policy.plugin_kind) &&
           !skipped_by_environment(s->id()) && (policy.allow_tf32 || !is_tf32_variant(s->id()));
  };
  const std::string key = identity_string(p);
  Selection best;
  double best_ms = 0;
  int verified = 0;
  std::vector<std::string> bad;
  // Evidence for one solver: bad ones are avoided, the fastest verified one wins.
  const auto weigh = [&](const Solver* s, const TrialRecord& rec) {
    ++best.evidence;
    if (is_bad_status(rec.status)) {
      bad.push_back(fmt::format("{} ({})", s->id(), rec.status));
    } else if (rec.status == "ok") {
      ++verified;
      if (!best.solver || rec.median_ms < best_ms) {
        best.solver = s;
        best_ms = rec.median_ms;
      }
    }
  };
  const Solver* fallback = nullptr;
  for (const Solver* s : solvers_on(policy.device)) {
    if (!eligible(s)) continue;
    const auto rec = store.find(device, key, std::string(s->id()));
    if (rec) weigh(s, *rec);
    // No usable evidence: a candidate for the list-order fallback (cpu:ref only as the last).
    const bool usable =
        rec && (rec->status == "ok" || rec->status == "unsupported" || is_bad_status(rec->status));
    if (!fallback && !usable && s->id() != reference && s->check(p).is_ok()) {
      fallback = s;
    }
  }
  // Workarounds recorded for this problem (transforms are built from their ids, not listed).
  for (const TrialRecord& r : store.for_problem(device, key)) {
    if (!transforms::is_transform_id(r.solver)) continue;
    const Solver* s = find_solver(r.solver);
    if (s && eligible(s)) weigh(s, r);
  }
  // Evidence that could not be read must not turn into a choice: a solver recorded as hanging
  // would be the list-order fallback.
  if (auto st = store.read_failure(); !st) return st;
  std::string bad_text;
  for (const auto& b : bad) bad_text += (bad_text.empty() ? "" : ", ") + b;
  const std::string avoided = bad.empty() ? "" : "; avoided, recorded bad here: " + bad_text;
  if (best.solver) {
    best.why =
        fmt::format("fastest verified on this device: {}{} at {:.3f} ms (median), of {} verified{}",
                    transforms::is_transform_id(best.solver->id()) ? "the workaround " : "",
                    best.solver->id(), best_ms, verified, avoided);
    return best;
  }
  if (policy.verified_only) {
    return Status{StatusCode::not_applicable,
                  fmt::format("no solver or workaround verified for this problem on this device "
                              "({} with evidence){}",
                              best.evidence, avoided)};
  }
  if (!fallback && !reference.empty()) fallback = find_solver(reference);
  if (!fallback) {
    return Status{
        StatusCode::not_applicable,
        "no verified result for this problem on this device and no applicable solver" + avoided};
  }
  best.solver = fallback;
  best.why = fmt::format(
      "no verified result for this problem on this device: first applicable solver in list order{}",
      avoided);
  return best;
}

}  // namespace convguard::db
