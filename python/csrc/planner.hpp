// The extension's side of selection: one convguard Context per (device, TF32 allowed), one plan
// per distinct problem, kept for the life of the process (or until the options change), and the
// record of which layer ran which problem on which solver, for convert()'s report.
//
// Policies (convguard.torch.Options, docs/pytorch.md):
//   known           only solvers and workarounds verified on this device; an unknown problem is
//                   probed in the sandbox first (every solver, then workarounds), once
//   first-verified  the same, but an unknown problem is probed in list order up to the first
//                   solver that verifies (cheaper first call)
// (`off`, PyTorch's own convolution, never reaches C++.) A problem nothing verified for fails
// with the evidence, once probed; the failure is remembered, so the next call fails at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "convguard/context.hpp"

namespace convguard::torch_ext {

struct PlannerOptions {
  bool probe_until_first_ok = false;  // first-verified
  std::string db_path;                // empty: $CONVGUARD_DB or the default
  double trial_timeout_s = 0;         // 0: derived per problem
};

class Planner {
 public:
  static Planner& instance();
  // Replaces the options; plans and contexts made under the old ones are dropped.
  void configure(const PlannerOptions& o);
  // Runs p on the tensors (views matching x_desc/w_desc/y_desc of p) on `device` ("cpu",
  // "cuda:N"). The first call for a problem plans it (probing when unknown). `layer` names the
  // caller's module in errors and in the report.
  [[nodiscard]] Status run(const Problem& p, const std::string& device, bool allow_tf32,
                           const std::string& layer, const ConvTensors& t);
  // What `layer` ran: one line per (direction, problem) it planned,
  // "DIRECTION\tPROBLEM\tSOLVER\tWHY" (SOLVER empty when nothing verified; WHY then the error).
  std::vector<std::string> report(const std::string& layer);
  void clear_report();

 private:
  struct Entry;
  struct Impl;
  Planner();
  std::shared_ptr<Entry> entry_for(const Problem& p, const std::string& device, bool allow_tf32);
  void plan(Entry& e, const Problem& p);
  std::shared_ptr<Impl> impl_;
  std::mutex mu_;       // impl_, its entry map and report
  std::mutex plan_mu_;  // planning, one problem at a time
};

}  // namespace convguard::torch_ext
