#include "cpu/solvers/implicit_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cpu/isa.hpp"
#include "cpu/solvers/implicit_gemm_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

std::int64_t panel_floats(const Problem& p, int nr) {
  const Geometry G = detail::geometry(p);
  const bool fwd = p.direction == Direction::forward;
  const std::int64_t width = fwd ? G.kg : G.cg, depth = fwd ? G.cg : G.kg;
  return G.g * ((width + nr - 1) / nr) * nr * G.taps() * depth;
}

}  // namespace

std::string_view ImplicitGemmSolver::id() const {
  return isa_ == Isa::avx512 ? "cpu:implicit_gemm:avx512" : "cpu:implicit_gemm:avx2";
}

Status ImplicitGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(isa_); !s) return s;
  // Backward-weights vectorises over output channels: with fewer than half a vector of them per
  // group most lanes idle (measured 0.7 GFLOP/s at k=1, 20x slower than cpu:direct).
  if (p.direction == Direction::backward_weights && p.k / p.g < lanes(isa_) / 2) {
    return not_applicable(fmt::format(
        "backward-weights vectorises over output channels: {} per group fill too few of {} lanes",
        p.k / p.g, lanes(isa_)));
  }
  return Status::ok();
}

StagingSpec ImplicitGemmSolver::staging(const Problem&) const {
  return StagingSpec{Order::channels_last, Order::channels_first, Padding{}, false};
}

void ImplicitGemmSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  layout.add(std::max(p.c, p.k) + 64);  // the zero row out-of-image taps point at
  layout.add(p.direction == Direction::backward_weights ? 0 : panel_floats(p, 2 * lanes(isa_)));
}

Status ImplicitGemmSolver::compute(const Problem& p, const StagedTensors& t,
                                   std::span<std::byte> ws, const WorkspaceLayout& layout,
                                   int first_scratch) const {
  float* zero = layout.get(ws, first_scratch);
  std::fill(zero, zero + std::max(p.c, p.k) + 64, 0.f);
  float* panels = layout.get(ws, first_scratch + 1);
  if (isa_ == Isa::avx512)
    igemm::run_avx512(p.direction, t.geo, t, t.w, panels, zero);
  else
    igemm::run_avx2(p.direction, t.geo, t, t.w, panels, zero);
  return Status::ok();
}

}  // namespace convguard::cpu
