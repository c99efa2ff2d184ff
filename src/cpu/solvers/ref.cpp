#include "cpu/solvers/ref.hpp"

#include "convguard/reference.hpp"

namespace convguard::cpu {

Status RefSolver::check(const Problem& p) const {
  return validate(p);
}

Result<std::size_t> RefSolver::workspace_bytes(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::size_t{0};
}

Status RefSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte>) const {
  return reference_conv(plan.problem, t);
}

}  // namespace convguard::cpu
