// Selection: which solver to run for a problem on this device, from the evidence in the results
// database. The fastest solver recorded ok for this device fingerprint, a workaround (transform,
// docs/transforms.md) included: it is chosen when it is the only verified option or the fastest;
// never one recorded hang, crash or wrong; without evidence, the backends' list order minus
// solvers known bad here (the device's reference solver, cpu:ref or gpu:naive, last). TF32
// variants only where the policy allows them.
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

// What selection may choose from: the solvers of one device kind (a plugin device's kind named),
// and whether TF32 variants (ids ending in ":tf32", docs/gpu.md) may compute f32 problems.
struct SelectPolicy {
  Device device = Device::cpu;
  std::string plugin_kind;  // Device::plugin: "hip"
  bool allow_tf32 = false;
  // Only solvers and workarounds recorded ok here: without one, not_applicable naming the
  // evidence instead of the list-order fallback.
  bool verified_only = false;
};

[[nodiscard]] Result<Selection> select_solver(Store& store, const std::string& device_fingerprint,
                                              const Problem& p, const SelectPolicy& policy = {});

}  // namespace convguard::db
