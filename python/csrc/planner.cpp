#include "planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "convguard/canonical.hpp"

namespace convguard::torch_ext {
namespace {

// A problem's identity on a device, as numbers: hashing it costs far less than its canonical
// string, and the plan lookup is on every convolution call.
struct Key {
  std::array<std::int64_t, 30> v{};
  std::string device;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h = std::hash<std::string>{}(k.device);
    for (std::int64_t x : k.v) h = h * 1000003u ^ static_cast<std::size_t>(x);
    return h;
  }
};

Key key_of(const Problem& p, const std::string& device, bool tf32) {
  Key k;
  k.device = device;
  std::size_t i = 0;
  const auto put = [&](std::int64_t x) { k.v[i++] = x; };
  put(p.spatial_dims), put(p.g), put(p.n), put(p.c), put(p.k);
  for (const Dims3* d : {&p.input, &p.filter, &p.stride, &p.dilation, &p.pad_begin, &p.pad_end})
    for (std::int64_t x : *d) put(x);
  put(static_cast<std::int64_t>(p.direction)), put(static_cast<std::int64_t>(p.dtype));
  put(static_cast<std::int64_t>(p.x_layout)), put(static_cast<std::int64_t>(p.w_layout));
  put(static_cast<std::int64_t>(p.y_layout)), put(tf32 ? 1 : 0);
  return k;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\t', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

// One planned problem: its plan, or why there is none. Runs of one plan are serialised (a plan
// owns one workspace).
struct Planner::Entry {
  std::mutex mu;
  std::shared_ptr<Impl> impl;  // the options it was made under
  std::string device;
  bool allow_tf32 = false;
  bool planned = false;
  std::unique_ptr<ConvPlan> plan;
  Status error;  // set when planning failed
  std::string problem, solver, why;
  std::string device_description;   // "cpu: AMD EPYC, 2 threads, ..." (the evidence's device)
  std::vector<std::string> layers;  // those that ran it (report)
};

// State under one set of options; replaced whole by configure().
struct Planner::Impl {
  PlannerOptions options;
  std::map<std::pair<std::string, bool>, std::unique_ptr<Context>> contexts;
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> entries;
  std::map<std::string, std::vector<std::string>> report;  // layer -> rows
};

Planner::Planner() : impl_(std::make_shared<Impl>()) {}

Planner& Planner::instance() {
  static Planner p;
  return p;
}

void Planner::configure(const PlannerOptions& o) {
  auto fresh = std::make_shared<Impl>();
  fresh->options = o;
  std::lock_guard lock(mu_);
  impl_ = std::move(fresh);
}

std::shared_ptr<Planner::Entry> Planner::entry_for(const Problem& p, const std::string& device,
                                                   bool allow_tf32) {
  const Key key = key_of(p, device, allow_tf32);
  std::lock_guard lock(mu_);
  auto [it, fresh] = impl_->entries.try_emplace(key);
  if (fresh) {
    it->second = std::make_shared<Entry>();
    it->second->impl = impl_;
    it->second->device = device;
    it->second->allow_tf32 = allow_tf32;
  }
  return it->second;
}

// Called with e.mu held, once per entry. Planning may probe for seconds: the map lock is not held,
// so problems already planned keep running; plans are made one at a time (a Context and its
// database are not shared between threads).
void Planner::plan(Entry& e, const Problem& p) {
  e.planned = true;
  e.problem = to_canonical(p);
  std::lock_guard plock(plan_mu_);
  Impl& impl = *e.impl;
  auto& ctx = impl.contexts[{e.device, e.allow_tf32}];
  if (!ctx) {
    ContextOptions co;
    co.device = e.device;
    co.allow_tf32 = e.allow_tf32;
    co.db_path = impl.options.db_path;
    co.probe_unknown = true;
    co.verified_only = true;
    co.probe_until_first_ok = impl.options.probe_until_first_ok;
    co.trial_timeout_s = impl.options.trial_timeout_s;
    auto opened = Context::open(co);
    if (!opened) {
      e.error = opened.status();
      return;
    }
    ctx = std::move(*opened);
  }
  e.device_description = ctx->device_description();
  auto plan = ctx->plan(p);
  if (!plan) {
    e.error = plan.status();
    return;
  }
  e.plan = std::move(*plan);
  e.solver = std::string(e.plan->solver_id());
  e.why = e.plan->why();
}

Status Planner::run(const Problem& p, const std::string& device, bool allow_tf32,
                    const std::string& layer, const ConvTensors& t) {
  const std::shared_ptr<Entry> e = entry_for(p, device, allow_tf32);
  std::lock_guard lock(e->mu);
  if (!e->planned) plan(*e, p);
  if (std::find(e->layers.begin(), e->layers.end(), layer) == e->layers.end()) {
    e->layers.push_back(layer);
    const std::string row =
        fmt::format("{}\t{}\t{}\t{}", to_string(p.direction), e->problem, e->solver,
                    one_line(e->error ? e->why : e->error.message()));
    std::lock_guard mlock(mu_);
    e->impl->report[layer].push_back(row);
  }
  if (!e->error) {
    return Status{e->error.code(),
                  fmt::format("convguard: layer '{}' ({}): no verified solver for {} on {}: {}",
                              layer, to_string(p.direction), e->problem,
                              e->device_description.empty() ? device : e->device_description,
                              e->error.message())};
  }
  return e->plan->run(t);
}

std::vector<std::string> Planner::report(const std::string& layer) {
  std::lock_guard lock(mu_);
  auto it = impl_->report.find(layer);
  return it == impl_->report.end() ? std::vector<std::string>{} : it->second;
}

void Planner::clear_report() {
  std::lock_guard lock(mu_);
  impl_->report.clear();
}

}  // namespace convguard::torch_ext
