// Selection: which solver to run for a problem on this device, from the evidence in the results
// database. The fastest solver recorded ok for this device fingerprint, a workaround (transform,
// docs/transforms.md) included: it is chosen when it is the only verified option or the fastest;
// never one recorded hang, crash or wrong; without evidence, the backends' list order minus
// solvers known bad here.
#pragma once

#include <string>

#include "convguard/solver.hpp"
#include "db/store.hpp"

namespace convguard::db {

struct Selection {
  const Solver* solver = nullptr;
  std::string why;   // "fastest verified on this device: ..." / "no evidence: ..."
  int evidence = 0;  // solvers with any recorded result for this problem on this device
};

[[nodiscard]] Result<Selection> select_solver(Store& store, const std::string& device_fingerprint,
                                              const Problem& p);

}  // namespace convguard::db
