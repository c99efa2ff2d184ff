// What the results database holds for one problem among the solvers a probe tried: the probe's
// results table and the model verdicts both read it this way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "db/store.hpp"

namespace convguard::cli {

struct ProblemResults {
  std::string plain, workaround;  // the fastest verified plain solver / workaround; "" if none
  double plain_ms = 0, workaround_ms = 0;
  std::map<std::string, std::vector<std::string>> by_status;  // status -> solver ids, in order
  // The fastest verified of either kind.
  const std::string& fastest() const;
  double fastest_ms() const;
};

ProblemResults problem_results(db::Store& store, const std::string& fingerprint, const Problem& p,
                               const std::vector<std::string>& solvers);

// The problem's name and its direction when not forward, or its canonical string.
std::string problem_label(const Problem& p);

}  // namespace convguard::cli
