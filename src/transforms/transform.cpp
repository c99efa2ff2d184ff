#include "transforms/transform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "convguard/canonical.hpp"

namespace convguard::transforms {
namespace {

constexpr std::size_t kAlign = 256;  // device allocations' alignment, kept for every slice

std::size_t aligned(std::size_t b) {
  return (b + kAlign - 1) / kAlign * kAlign;
}

std::size_t span_bytes(const TensorDesc& d) {
  return static_cast<std::size_t>(d.span()) * size_of(d.dtype);
}

struct TransformPlan : Plan {
  using Plan::Plan;
  Decomposition dec;
  std::vector<std::unique_ptr<Plan>> inner_plans;  // one per distinct inner problem
  std::size_t x_bytes = 0, w_bytes = 0, y_bytes = 0, inner_ws = 0;
  std::size_t total() const {
    return aligned(x_bytes) + aligned(w_bytes) + aligned(y_bytes) + inner_ws;
  }
};

Status inner_context(const Status& s, const Solver& inner, const Problem& q) {
  return {s.code(),
          fmt::format("{} on inner problem {}: {}", inner.id(), identity_string(q), s.message())};
}

// Sizes of the workspace slices: the largest inner tensor of each role and inner workspace.
Status size_plan(const Solver& inner, TransformPlan& tp) {
  for (const Problem& q : tp.dec.problems) {
    tp.x_bytes = std::max(tp.x_bytes, span_bytes(x_desc(q)));
    tp.w_bytes = std::max(tp.w_bytes, span_bytes(w_desc(q)));
    tp.y_bytes = std::max(tp.y_bytes, span_bytes(y_desc(q)));
    auto ws = inner.workspace_bytes(q);
    if (!ws) return inner_context(ws.status(), inner, q);
    tp.inner_ws = std::max(tp.inner_ws, *ws);
  }
  return {};
}

// The caller's tensors as host memory: themselves, or copies of device memory.
struct HostSide {
  ConvTensors view;
  HostTensor x, w, y;
};

Status download(detail::DeviceMemory& mem, const TensorView& dev, HostTensor& host,
                TensorView& view) {
  host = HostTensor(dev.desc);
  view = host.view();
  return mem.copy_out(host.data(), dev.data, host.bytes());
}

}  // namespace

TransformSolver::TransformSolver(std::string id, const Solver& inner, MemoryFactory memory)
    : id_(std::move(id)), inner_(inner), memory_(std::move(memory)) {}

int add_problem(Decomposition& dec, const Problem& q) {
  for (std::size_t i = 0; i < dec.problems.size(); ++i)
    if (dec.problems[i] == q) return static_cast<int>(i);
  dec.problems.push_back(q);
  return static_cast<int>(dec.problems.size() - 1);
}

Problem dense_problem(const Problem& p) {
  Problem q = p;
  q.x_strides.clear();
  q.w_strides.clear();
  q.y_strides.clear();
  q.name.clear();
  return q;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return -floor_div(-a, b);
}

Result<Decomposition> TransformSolver::valid_decomposition(const Problem& p) const {
  auto dec = decompose(p);
  if (!dec) return dec.status();
  for (const Problem& q : dec->problems) {
    if (auto st = validate(q); !st)
      return Status{StatusCode::internal_error, fmt::format("{}: inner problem {} is invalid: {}",
                                                            id_, identity_string(q), st.message())};
  }
  return dec;
}

Status TransformSolver::check(const Problem& p) const {
  auto dec = valid_decomposition(p);
  if (!dec) return dec.status();
  for (const Problem& q : dec->problems) {
    if (auto st = inner_.check(q); !st) return inner_context(st, inner_, q);
  }
  return {};
}

Result<std::size_t> TransformSolver::workspace_bytes(const Problem& p) const {
  auto dec = decompose(p);
  if (!dec) return dec.status();
  TransformPlan tp(p);
  tp.dec = std::move(*dec);
  if (auto st = size_plan(inner_, tp); !st) return st;
  return tp.total();
}

Result<std::unique_ptr<Plan>> TransformSolver::plan(const Problem& p) const {
  auto dec = valid_decomposition(p);
  if (!dec) return dec.status();
  auto tp = std::make_unique<TransformPlan>(p);
  tp->dec = std::move(*dec);
  if (auto st = size_plan(inner_, *tp); !st) return st;
  // The inner solver's plan() checks each inner problem (Solver::plan), so check() is not
  // repeated here.
  for (const Problem& q : tp->dec.problems) {
    auto ip = inner_.plan(q);
    if (!ip) return inner_context(ip.status(), inner_, q);
    tp->inner_plans.push_back(std::move(*ip));
  }
  return std::unique_ptr<Plan>(std::move(tp));
}

Accuracy TransformSolver::accuracy(const Problem& p) const {
  auto dec = decompose(p);
  if (!dec || dec->problems.empty()) return inner_.accuracy(p);
  Accuracy a = inner_.accuracy(dec->problems.front());
  for (const Problem& q : dec->problems) {
    const Accuracy b = inner_.accuracy(q);
    a.exact_on_integers = a.exact_on_integers && b.exact_on_integers;
    a.error_growth = std::max(a.error_growth, b.error_growth);
    a.result_roundings = std::max(a.result_roundings, b.result_roundings);
    a.local_errors = a.local_errors && b.local_errors;
  }
  if (dec->accumulate && dec->parts.size() > 1) {
    // Each part's result is rounded to the storage type before the parts are added: with
    // random signs the rounding errors add like sqrt(parts) against a sum that grows the same
    // way, so a few roundings' worth, capped, is the honest bound.
    a.result_roundings += std::min(4.0, std::sqrt(static_cast<double>(dec->parts.size())));
    if (p.dtype != DType::f32) a.exact_on_integers = false;
  }
  return a;
}

Status TransformSolver::run(const Plan& plan, const ConvTensors& t,
                            std::span<std::byte> workspace) const {
  const auto& tp = static_cast<const TransformPlan&>(plan);
  const Problem& p = plan.problem;
  if (workspace.size() < tp.total())
    return invalid_argument(
        fmt::format("{}: workspace of {} bytes, needs {}", id_, workspace.size(), tp.total()));
  std::unique_ptr<detail::DeviceMemory> mem = memory_ ? memory_() : nullptr;
  HostSide host;
  host.view = t;
  if (mem) {
    if (auto st = mem->synchronize("before the transform"); !st) return st;
    if (auto st = download(*mem, t.x, host.x, host.view.x); !st) return st;
    if (auto st = download(*mem, t.w, host.w, host.view.w); !st) return st;
    if (auto st = download(*mem, t.y, host.y, host.view.y); !st) return st;
  }
  const TensorView& out = output_of(p, host.view);
  std::vector<double> sum;
  if (tp.dec.accumulate)
    sum.assign(static_cast<std::size_t>(out.desc.elements()), 0.0);
  else
    zero(out);

  // Workspace: inner x, w, y, then the inner solver's own workspace.
  std::byte* base = workspace.data();
  std::byte* dev_x = base;
  std::byte* dev_w = dev_x + aligned(tp.x_bytes);
  std::byte* dev_y = dev_w + aligned(tp.w_bytes);
  std::byte* dev_ws = dev_y + aligned(tp.y_bytes);
  // Host staging of the inner tensors when they live on a device.
  std::vector<std::byte> hx, hw, hy;
  if (mem) {
    hx.resize(tp.x_bytes);
    hw.resize(tp.w_bytes);
    hy.resize(tp.y_bytes);
  }
  std::byte* host_x = mem ? hx.data() : dev_x;
  std::byte* host_w = mem ? hw.data() : dev_w;
  std::byte* host_y = mem ? hy.data() : dev_y;

  for (std::size_t i = 0; i < tp.dec.parts.size(); ++i) {
    const Part& part = tp.dec.parts[i];
    const Problem& q = tp.dec.problems[part.inner];
    const ConvTensors hin{{host_x, x_desc(q)}, {host_w, w_desc(q)}, {host_y, y_desc(q)}};
    const ConvTensors din{{dev_x, x_desc(q)}, {dev_w, w_desc(q)}, {dev_y, y_desc(q)}};
    // Gather the two tensors the direction reads.
    if (!q.writes_x()) gather(host.view.x, part.x, hin.x);
    if (!q.writes_w()) gather(host.view.w, part.w, hin.w);
    if (!q.writes_y()) gather(host.view.y, part.y, hin.y);
    if (mem) {
      if (!q.writes_x())
        if (auto st = mem->copy_in(dev_x, host_x, span_bytes(hin.x.desc)); !st) return st;
      if (!q.writes_w())
        if (auto st = mem->copy_in(dev_w, host_w, span_bytes(hin.w.desc)); !st) return st;
      if (!q.writes_y())
        if (auto st = mem->copy_in(dev_y, host_y, span_bytes(hin.y.desc)); !st) return st;
    }
    const auto ws = std::span<std::byte>(dev_ws, tp.inner_ws);
    if (auto st = inner_.run(*tp.inner_plans[part.inner], din, ws); !st)
      return {st.code(), fmt::format("part {} of {}: {}", i + 1, tp.dec.parts.size(),
                                     inner_context(st, inner_, q).message())};
    const TensorView& inner_out = output_of(q, hin);
    if (mem) {
      if (auto st = mem->synchronize(inner_.id().data()); !st) return st;
      if (auto st =
              mem->copy_out(inner_out.data, output_of(q, din).data, span_bytes(inner_out.desc));
          !st)
        return st;
    }
    const IndexMaps& m = q.writes_x() ? part.x : q.writes_w() ? part.w : part.y;
    if (tp.dec.accumulate)
      accumulate(inner_out, m, out.desc, sum.data());
    else
      scatter(inner_out, m, out);
  }
  if (tp.dec.accumulate) store_sum(sum.data(), out);
  if (mem) {
    const TensorView& dev_out = output_of(p, t);
    return mem->copy_in(dev_out.data, out.data, span_bytes(out.desc));
  }
  return {};
}

}  // namespace convguard::transforms
