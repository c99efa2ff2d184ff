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
  std::string device = "cpu";
  std::string db_path;  // empty: $CONVGUARD_DB or ~/.cache/convguard/convguard.db
  // When the database holds nothing about a planned problem on this device, probe it first:
  // every solver in a sandboxed worker process, results recorded, then choose from them. A solver
  // that hangs or crashes costs its deadline, never the caller's process. Skipped (and said in
  // why()) when another probe holds the database.
  bool probe_unknown = false;
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
