#include "convguard/trial.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "convguard/reference.hpp"
#include "core/host_buffer.hpp"

namespace convguard {

TrialTensors::TrialTensors(const Problem& p) : x(x_desc(p)), w(w_desc(p)), y(y_desc(p)) {}

void fill_inputs(const Problem& p, TrialTensors& t, std::uint64_t seed, FillMode mode) {
  if (!p.writes_x()) fill(t.x.view(), TensorRole::x, seed, mode);
  if (!p.writes_w()) fill(t.w.view(), TensorRole::w, seed, mode);
  if (!p.writes_y()) fill(t.y.view(), TensorRole::y, seed, mode);
  t.reference.reset();
  t.reference_magnitude.reset();
  t.reference_tf32.reset();
  t.sampled_reference.clear();
  t.device_reference.reset();
}

namespace {
double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::int64_t sampled_points(const Problem& p, const TrialOptions& o) {
  const double per_point = static_cast<double>(std::max<std::int64_t>(1, p.reduction_length()));
  const auto affordable = static_cast<std::int64_t>(o.sample_mac_budget / per_point);
  return std::min(o.samples, std::max(o.min_samples, affordable));
}

Status verify_output(const Solver& s, const Problem& p, TrialTensors& t, const TrialOptions& o,
                     TrialResult& r) {
  const Accuracy acc = s.accuracy(p);
  if (p.flops() / 2 <= o.full_reference_limit) {
    const auto cached = [&](std::optional<std::vector<double>>& slot, Operands ops) -> Status {
      if (slot) return Status::ok();
      auto ref = reference_output(p, t.view(), ops);
      if (!ref) return ref.status();
      slot = std::move(*ref);
      return Status::ok();
    };
    if (auto st = cached(t.reference, Operands::stored); !st) return st;
    if (auto st = cached(t.reference_magnitude, Operands::magnitude); !st) return st;
    ReferenceExtras extras{&*t.reference_magnitude, nullptr};
    if (tf32_check_applies(p, acc)) {
      if (auto st = cached(t.reference_tf32, Operands::tf32_rounded); !st) return st;
      extras.tf32 = &*t.reference_tf32;
    }
    r.verdict = compare(p, t.output(p), *t.reference, acc, o.fill, extras);
  } else {
    r.verdict = compare_sampled(p, t.output(p), t.view(), acc, o.fill, sampled_points(p, o), o.seed,
                                &t.sampled_reference);
  }
  return Status::ok();
}

Status time_runs(const std::function<Result<double>()>& run_once, const TrialOptions& o,
                 TrialResult& r) {
  if (o.max_time_ms > 0 && r.first_ms >= o.max_time_ms) {
    // One run already took the whole timing budget: it is the measurement (planning included).
    r.iterations = 1;
    r.mean_ms = r.median_ms = r.min_ms = r.first_ms;
    return Status::ok();
  }
  std::vector<double> times;
  double spent = 0;
  for (int i = 0; i < o.iterations; ++i) {
    auto d = run_once();
    if (!d) return d.status();
    times.push_back(*d);
    spent += *d;
    if (o.max_time_ms > 0 && spent >= o.max_time_ms) break;
    if (o.stable_within > 0 && times.size() >= 3) {
      const double best = *std::min_element(times.begin(), times.end());
      bool stable = true;
      for (std::size_t j = times.size() - 3; j < times.size(); ++j) {
        stable = stable && times[j] <= best * (1 + o.stable_within);
      }
      if (stable) break;
    }
  }
  r.iterations = static_cast<int>(times.size());
  if (!times.empty()) {
    r.mean_ms = spent / static_cast<double>(times.size());
    r.min_ms = *std::min_element(times.begin(), times.end());
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    r.median_ms = sorted[sorted.size() / 2];
  }
  return Status::ok();
}

TrialResult run_trial(const Solver& s, const Problem& p, TrialTensors& t, const TrialOptions& o) {
  TrialResult r;
  if (auto st = s.check(p); !st) {
    r.status = st;
    r.declined = true;
    return r;
  }
  auto ws = s.workspace_bytes(p);
  if (!ws) {
    r.status = ws.status();
    return r;
  }
  r.workspace_bytes = *ws;
  // The workspace has guard zones like the tensors' (HostTensor): a solver that writes past the
  // workspace it asked for is caught here, not by whatever the allocator put next to it.
  constexpr std::size_t kGuard = kGuardZoneBytes;
  std::unique_ptr<std::byte, decltype(&std::free)> buf(nullptr, &std::free);
  if (*ws > 0) {
    std::size_t rounded = 0;
    if (!__builtin_add_overflow(*ws, std::size_t{63} + 2 * kGuard, &rounded))
      buf.reset(static_cast<std::byte*>(allocate_host_buffer(rounded / 64 * 64)));
    if (!buf) {
      r.status = {StatusCode::out_of_memory, "workspace of " + std::to_string(*ws) + " bytes"};
      return r;
    }
    fill_guard_zones(buf.get(), *ws);
  }
  const std::span<std::byte> wspan(buf ? buf.get() + kGuard : nullptr, *ws);
  // Every solver run below is followed by this: a write outside the tensors or the workspace is a
  // wrong result, named, whatever the output's values.
  const auto outside = [&]() -> std::string {
    std::string where;
    const auto add = [&](bool broken, const char* what) {
      if (broken) where += (where.empty() ? "" : ", ") + std::string(what);
    };
    add(!t.x.guards_intact(), "x");
    add(!t.w.guards_intact(), "w");
    add(!t.y.guards_intact(), "y");
    add(buf && !guard_zones_intact(buf.get(), *ws), "the workspace");
    return where;
  };
  const auto wrote_outside = [&](const std::string& where) {
    Verdict v;
    v.ok = false;
    v.message = "wrote outside its buffers: the " + std::to_string(kGuard) + " bytes next to " +
                where + " changed";
    r.verdict = v;
    return r;
  };
  poison(t.output(p));
  if (o.on_plan) o.on_plan();
  const double t0 = now_ms();
  auto plan = s.plan(p);
  if (!plan) {
    r.status = plan.status();
    return r;
  }
  if (auto st = s.run(**plan, t.view(), wspan); !st) {
    r.status = st;
    return r;
  }
  r.first_ms = now_ms() - t0;
  if (o.on_first_run) o.on_first_run(r.first_ms);
  if (const std::string where = outside(); !where.empty()) return wrote_outside(where);
  if (o.verify) {
    if (auto st = verify_output(s, p, t, o, r); !st) {
      r.status = st;
      return r;
    }
  }
  if (o.time) {
    if (auto st = time_runs(
            [&]() -> Result<double> {
              const double a = now_ms();
              if (auto st = s.run(**plan, t.view(), wspan); !st) return st;
              return now_ms() - a;
            },
            o, r);
        !st) {
      r.status = st;
      return r;
    }
    if (const std::string where = outside(); !where.empty()) return wrote_outside(where);
  }
  return r;
}

}  // namespace convguard
