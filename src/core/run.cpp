#include <cstdlib>
#include <memory>

#include "convguard/solver.hpp"
#include "core/host_buffer.hpp"

namespace convguard {

Result<std::unique_ptr<Plan>> Solver::plan(const Problem& p) const {
  if (auto s = check(p); !s) return s;
  return std::make_unique<Plan>(p);
}

Accuracy Solver::accuracy(const Problem&) const {
  return {};
}

Status convolve(const Solver& s, const Problem& p, const ConvTensors& t) {
  if (auto st = validate(p); !st) return st;
  auto plan = s.plan(p);
  if (!plan) return plan.status();
  auto ws = s.workspace_bytes(p);
  if (!ws) return ws.status();
  std::unique_ptr<std::byte, decltype(&std::free)> buf(nullptr, &std::free);
  if (*ws > 0) {
    buf.reset(static_cast<std::byte*>(allocate_host_buffer(*ws)));
    if (!buf) return {StatusCode::out_of_memory, "workspace of " + std::to_string(*ws) + " bytes"};
  }
  return s.run(**plan, t, std::span<std::byte>(buf.get(), *ws));
}

}  // namespace convguard
