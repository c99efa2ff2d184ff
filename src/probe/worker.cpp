#include "probe/worker.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"

namespace convguard::probe {
namespace {

std::uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;
}

// Throughput of this worker on a small direct convolution: the unit of the parent's deadlines.
double measure_gflops() {
  const Solver* s = find_solver("cpu:direct");
  auto p = parse_problem("mb2ic32ih28oc32oh28kh3ph1");
  if (!s || !p) return 10.0;
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  TrialOptions o;
  o.verify = false;
  o.time = true;
  o.iterations = 5;
  const TrialResult r = run_trial(*s, *p, t, o);
  return r.ran() && r.min_ms > 0 ? p->flops() / (r.min_ms * 1e6) : 10.0;
}

}  // namespace

TrialReply run_request(const TrialRequest& req) {
  TrialReply rep;
  auto p = parse_problem(req.problem);
  if (!p) {
    rep.status = "error";
    rep.reason = "problem: " + p.status().message();
    return rep;
  }
  const Solver* s = find_solver(req.solver);
  if (!s) {
    rep.status = "error";
    rep.reason = "no solver '" + req.solver + "' in this worker (plugin not loaded?)";
    return rep;
  }
  TrialTensors t(*p);
  fill_inputs(*p, t, req.seed, FillMode::uniform);
  TrialOptions o;
  o.verify = req.verify;
  o.time = true;
  o.iterations = req.max_runs;
  o.max_time_ms = req.max_time_ms;
  o.stable_within = 0.05;
  o.seed = req.seed;
  o.on_first_run = [](double first_ms) {
    std::cout << nlohmann::json{{"progress", "first_run"}, {"first_ms", first_ms}}.dump() << "\n"
              << std::flush;
  };
  const TrialResult r = run_trial(*s, *p, t, o);
  rep.workspace_bytes = r.workspace_bytes;
  rep.peak_rss_bytes = peak_rss_bytes();
  if (!r.ran()) {
    switch (r.status.code()) {
      case StatusCode::not_applicable:
        rep.status = "unsupported";
        break;
      case StatusCode::out_of_memory:
        rep.status = "oom";
        break;
      default:
        rep.status = "error";
    }
    rep.reason = r.status.message();
    return rep;
  }
  rep.first_ms = r.first_ms;
  rep.median_ms = r.median_ms;
  rep.min_ms = r.min_ms;
  rep.runs = r.iterations;
  if (r.verdict) {
    rep.rel_error = r.verdict->rel_error;
    rep.max_abs_error = r.verdict->max_abs_error;
    rep.tolerance = r.verdict->tolerance;
    rep.sampled = r.verdict->sampled;
    if (!r.verdict->ok) {
      rep.status = "wrong";
      rep.reason = r.verdict->message;
      return rep;
    }
  }
  rep.status = "ok";
  return rep;
}

int worker_main() {
  std::ios::sync_with_stdio(false);
  (void)all_solvers();  // load plugins (CONVGUARD_PLUGINS) before saying ready
  const double gflops = measure_gflops();
  std::cout << nlohmann::json{{"ready", true}, {"pid", getpid()}, {"gflops", gflops}}.dump() << "\n"
            << std::flush;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    auto req = decode_request(line);
    TrialReply rep;
    if (!req) {
      rep.status = "error";
      rep.reason = req.status().message();
    } else {
      rep = run_request(*req);
    }
    std::cout << encode(rep) << "\n" << std::flush;
  }
  return 0;
}

}  // namespace convguard::probe
