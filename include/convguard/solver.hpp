// The solver interface: small, stateless; per-problem state lives in a Plan.
//
//   id()              stable "backend:family[:variant]", never reused
//   check(p)          ok, or not_applicable with the reason
//   workspace_bytes   scratch the run needs (staging copies, im2col buffers, transforms)
//   plan(p)           per-problem preparation (may fail with a status)
//   run(plan, t, ws)  computes the direction's output into t; `plan` is one this solver's plan()
//                     made (solvers may keep their own Plan subclass in it)
//
// A solver must write every element of its output (outputs are poisoned before verification)
// and must not read its output (backward passes overwrite, they do not accumulate).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "convguard/problem.hpp"
#include "convguard/verify.hpp"

namespace convguard {

struct Plan {
  explicit Plan(const Problem& p) : problem(p) {}
  virtual ~Plan() = default;
  Problem problem;
};

// Where a solver's tensors live: host memory, the current GPU's memory (device pointers), or the
// memory of a device a plugin drives itself (plugin.h cg_device_api; plugin_device() names it).
enum class Device { cpu, gpu, plugin };

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string_view id() const = 0;
  virtual Device device() const { return Device::cpu; }
  // Device::plugin: the plugin device's name ("hip" for devices "hip:N").
  virtual std::string_view plugin_device() const { return {}; }
  // Whether the solver computes p. A Status of not_applicable carries the reason.
  [[nodiscard]] virtual Status check(const Problem& p) const = 0;
  [[nodiscard]] virtual Result<std::size_t> workspace_bytes(const Problem& p) const = 0;
  [[nodiscard]] virtual Result<std::unique_ptr<Plan>> plan(const Problem& p) const;
  [[nodiscard]] virtual Status run(const Plan& plan, const ConvTensors& t,
                                   std::span<std::byte> workspace) const = 0;
  virtual Accuracy accuracy(const Problem& p) const;
};

// TF32 variants: ids ending in ":tf32" (gpu:tc_implicit_gemm:tf32, cudnn:fwd:heur0:tf32, and
// transforms around them) compute f32 problems with operands rounded to TF32 (10 mantissa bits).
// They verify with that rounding in the tolerance (Accuracy::operand_roundoff = kTf32Roundoff)
// and are selected only where the caller allows TF32.
inline bool is_tf32_variant(std::string_view id) {
  return id.ends_with(":tf32");
}
inline constexpr double kTf32Roundoff = 0x1p-11;
// Hopper's wgmma reads TF32 operands straight from fp32 shared memory, keeping each one's top 19
// bits: truncation, up to twice the rounded operand's error (gpu:wgmma_implicit_gemm:tf32).
inline constexpr double kTf32TruncatedRoundoff = 0x1p-10;

// Runs one solver end to end: check, plan, allocate the workspace, run.
[[nodiscard]] Status convolve(const Solver& s, const Problem& p, const ConvTensors& t);

}  // namespace convguard
