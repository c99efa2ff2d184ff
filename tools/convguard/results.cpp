#include "results.hpp"

#include "convguard/canonical.hpp"
#include "transforms/parse.hpp"

namespace convguard::cli {

const std::string& ProblemResults::fastest() const {
  if (workaround.empty()) return plain;
  return plain.empty() || workaround_ms < plain_ms ? workaround : plain;
}

double ProblemResults::fastest_ms() const {
  return &fastest() == &plain ? plain_ms : workaround_ms;
}

ProblemResults problem_results(db::Store& store, const std::string& fingerprint, const Problem& p,
                               const std::vector<std::string>& solvers) {
  const std::string key = identity_string(p);
  ProblemResults r;
  for (const std::string& sid : solvers) {
    auto rec = store.find(fingerprint, key, sid);
    if (!rec) continue;
    r.by_status[rec->status].push_back(sid);
    if (rec->status != "ok") continue;
    const bool workaround = transforms::is_transform_id(sid);
    std::string& best = workaround ? r.workaround : r.plain;
    double& best_ms = workaround ? r.workaround_ms : r.plain_ms;
    if (best.empty() || rec->median_ms < best_ms) {
      best = sid;
      best_ms = rec->median_ms;
    }
  }
  return r;
}

std::string problem_label(const Problem& p) {
  if (p.name.empty()) return identity_string(p);  // it says the direction itself
  return p.direction == Direction::forward ? p.name
                                           : p.name + " " + std::string(to_string(p.direction));
}

}  // namespace convguard::cli
