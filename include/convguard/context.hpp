// What a C++ program uses: open a context (device + results database), plan a problem (the
// fastest solver verified on this device, never one recorded bad, else list order; see
// docs/probe.md "Selection"), run it on the caller's buffers, ask which solver and why.
//
//   auto ctx = convguard::Context::open({});            // cpu, default database
//   auto plan = (*ctx)->plan(problem);                  // chooses and prepares
//   (*plan)->run({x, w, y});                            // tensors as x_desc/w_desc/y_desc(problem)
//   std::cout << (*plan)->solver_id() << ": " << (*plan)->why();
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "convguard/solver.hpp"

namespace convguard {

struct ContextOptions {
  // "cpu", a GPU ("cuda:0"; tensors passed to run() are then device pointers on it), or a device a
  // loaded plugin drives ("hip:0", plugins from CONVGUARD_PLUGINS).
  std::string device = "cpu";
  // Whether f32 problems may run on TF32 variants (ids ending in ":tf32": operands rounded to 10
  // mantissa bits, verified with that tolerance). Off: f32 stays fp32-accurate.
  bool allow_tf32 = false;
  std::string db_path;  // empty: $CONVGUARD_DB or ~/.cache/convguard/convguard.db
  // When the database holds nothing about a planned problem on this device, probe it first:
  // every solver in a sandboxed worker process, results recorded, then choose from them. A solver
  // that hangs or crashes costs its deadline, never the caller's process. Skipped (and said in
  // why()) when another probe holds the database.
  bool probe_unknown = false;
  // Only a solver or workaround recorded ok for the problem on this device may be chosen: plan()
  // fails with not_applicable, naming the evidence, when none is (after probing, when
  // probe_unknown is set and nothing verified yet). Off: without verified evidence, the first
  // applicable solver in list order (docs/probe.md "Selection").
  bool verified_only = false;
  // How an unknown problem is probed: every solver (timings compared), or solvers in list order
  // until the first verifies (a cheaper first call). Either way, when no plain solver verifies,
  // transforms around the ones that failed are tried until one verifies (probe --workarounds auto).
  bool probe_until_first_ok = false;
  // Each trial's deadline in seconds (0: derived from the problem's cost, docs/probe.md).
  double trial_timeout_s = 0;
  // The convguard binary whose `worker` command runs the trials. Empty: $CONVGUARD_WORKER, else the
  // binary of this build, else `convguard` on PATH.
  std::string worker;
};

class ConvPlan {
 public:
  virtual ~ConvPlan() = default;
  virtual std::string_view solver_id() const = 0;
  virtual const std::string& why() const = 0;
  virtual std::size_t workspace_bytes() const = 0;
  // Runs on the caller's tensors (descriptors from x_desc/w_desc/y_desc of the planned problem);
  // the plan owns its workspace.
  [[nodiscard]] virtual Status run(const ConvTensors& t) = 0;
};

class Context {
 public:
  virtual ~Context() = default;
  [[nodiscard]] static Result<std::unique_ptr<Context>> open(const ContextOptions& o);
  [[nodiscard]] virtual Result<std::unique_ptr<ConvPlan>> plan(const Problem& p) = 0;
  virtual const std::string& device_description() const = 0;
};

}  // namespace convguard
