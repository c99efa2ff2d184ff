// Exact workarounds as solvers (docs/transforms.md). A transform rewrites a problem into one or
// more inner problems for another solver (its inner, any solver, a transform too) and puts the
// exact answer together from their results: spatial tiles with their halo, zero-padded channels
// or sizes with the output cropped, another memory layout, the batch or the groups in parts.
//
// Ids name the transform, its parameters and the inner solver: xform:tile(32x32):cpu:direct.
// A transform runs where its inner does. Around a device solver (a GPU, a plugin's device) the
// caller's tensors are device memory: the transform brings them to the host, gathers each inner
// problem's tensors there, copies them into its device workspace, runs the inner solver and
// brings its output back; the copies are exact, the arithmetic is the inner solver's alone.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convguard/solver.hpp"
#include "core/staged_trial.hpp"
#include "transforms/index_maps.hpp"

namespace convguard::transforms {

// The memory calls for the inner solver's device; nullptr for host memory (CPU solvers).
using MemoryFactory = std::function<std::unique_ptr<detail::DeviceMemory>()>;

struct Part {
  int inner = 0;  // index into Decomposition::problems
  IndexMaps x, w, y;
};

struct Decomposition {
  std::vector<Problem> problems;  // the distinct inner problems (dense tensors)
  std::vector<Part> parts;
  // The written tensor is the sum of the parts' outputs (backward-weights over tiles or batch
  // parts); otherwise each kept element is written by exactly one part and the rest are zero.
  bool accumulate = false;
};

class TransformSolver : public Solver {
 public:
  TransformSolver(std::string id, const Solver& inner, MemoryFactory memory);
  std::string_view id() const override { return id_; }
  Device device() const override { return inner_.device(); }
  std::string_view plugin_device() const override { return inner_.plugin_device(); }
  const Solver& inner() const { return inner_; }

  // Applicable when the transform changes something for p and the inner solver takes every
  // inner problem; the reason otherwise names the inner problem the inner solver declined.
  [[nodiscard]] Status check(const Problem& p) const override;
  [[nodiscard]] Result<std::size_t> workspace_bytes(const Problem& p) const override;
  [[nodiscard]] Result<std::unique_ptr<Plan>> plan(const Problem& p) const override;
  [[nodiscard]] Status run(const Plan& plan, const ConvTensors& t,
                           std::span<std::byte> workspace) const override;
  // The inner solver's, plus one rounding to the storage type per part when parts are summed.
  Accuracy accuracy(const Problem& p) const override;

  // How p becomes inner problems; not_applicable, with the reason, when the transform does not
  // apply to p or would change nothing.
  [[nodiscard]] virtual Result<Decomposition> decompose(const Problem& p) const = 0;

 private:
  // decompose(p) with every inner problem checked by validate() (a bad one is a bug here).
  [[nodiscard]] Result<Decomposition> valid_decomposition(const Problem& p) const;
  std::string id_;
  const Solver& inner_;
  MemoryFactory memory_;
};

// The index of q among dec's distinct inner problems, added when new (border tiles and the last
// batch part differ from the rest; each distinct problem is planned once).
int add_problem(Decomposition& dec, const Problem& q);
// A dense copy of p with new layouts: what inner problems are made from.
Problem dense_problem(const Problem& p);
std::int64_t ceil_div(std::int64_t a, std::int64_t b);
std::int64_t floor_div(std::int64_t a, std::int64_t b);

}  // namespace convguard::transforms
