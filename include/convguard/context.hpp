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
