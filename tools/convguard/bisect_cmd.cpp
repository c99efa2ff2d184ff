// convguard bisect --solver ID --problem STRING --vary H,W|C|K|N [--range LO:HI]: where a
// solver's status changes along one quantity, each step a sandboxed trial recorded like any
// probe trial ("ok up to 42x42, hang from 43x43"). The probe's workarounds then tile below it.
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "flags.hpp"
#include "probe/bisect.hpp"
#include "probe/sweep.hpp"
#include "probe_session.hpp"

namespace convguard::cli {
namespace {

std::vector<FlagSpec> bisect_flags() {
  return {
      {0, "solver", "", "the solver id to bisect (a transform id too)"},
      {0, "problem", "",
       "canonical problem string: the shape, and by default the top of the range"},
      {0, "vary", "",
       "what varies: H,W (together; the default, W in 1D), D,H,W, H, W, D, C, K or N"},
      {0, "range", "", "LO:HI (default: the smallest valid value to the problem's own)"},
      {0, "device", "cpu", "cpu, cuda:N, or a plugin device such as hip:N"},
      {0, "timeout", "0", "deadline per trial in seconds (0: derived from the problem's cost)"},
      {0, "db", "", "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
      {0, "force", "", "rerun trials already recorded (default: use the recorded status)", true},
      {0, "plugin", "", "plugin shared object to load; repeatable", false, true},
      {'h', "help", "", "print this help", true},
  };
}

}  // namespace

int bisect_main(int argc, char** argv) {
  Flags f(bisect_flags());
  auto fail = [](const std::string& m) {
    std::fprintf(stderr, "convguard bisect: %s\n", m.c_str());
    return 2;
  };
  if (auto st = f.parse(argc, argv, 2); !st) return fail(st.message());
  if (f.on("help")) {
    std::printf(
        "usage: convguard bisect --solver ID --problem STRING [--vary H,W|C|K|N] [--range "
        "LO:HI]\n\n%s",
        f.usage().c_str());
    return 0;
  }
  if (!f.positional().empty()) return fail("unexpected argument '" + f.positional()[0] + "'");
  if (!f.given("solver")) return fail("--solver: give the solver id to bisect");
  if (!f.given("problem")) return fail("--problem: give the problem (canonical string)");
  auto p = parse_problem(f.str("problem"));
  if (!p) return fail("--problem: " + p.status().message());
  auto vary = probe::parse_vary(f.str("vary"), *p);
  if (!vary) return fail(vary.status().message());
  std::int64_t lo = probe::smallest_value(*p, *vary), hi = probe::value_of(*p, *vary);
  if (f.given("range")) {
    const std::string r = f.str("range");
    const auto colon = r.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no colon");
      std::size_t used = 0;
      lo = std::stoll(r.substr(0, colon), &used);
      if (used != colon) throw std::invalid_argument("junk");
      hi = std::stoll(r.substr(colon + 1), &used);
      if (used != r.size() - colon - 1) throw std::invalid_argument("junk");
    } catch (const std::exception&) {
      return fail(fmt::format("--range: '{}' is not LO:HI (whole numbers)", r));
    }
  }
  if (lo >= hi) return fail(fmt::format("--range: {}:{} is empty (LO must be below HI)", lo, hi));
  for (std::int64_t v : {lo, hi}) {
    if (auto q = probe::with_value(*p, *vary, v); !q)
      return fail(fmt::format("--range: at {}: {}", probe::describe_value(*p, *vary, v),
                              q.status().message()));
  }
  auto timeout = f.number_in("timeout", 0, 7 * 24 * 3600.0);  // finite: inf would mean no deadline
  if (!timeout) return fail(timeout.status().message());
  const double timeout_s = *timeout;
  int session_exit = 0;
  auto session = open_probe_session(f.all("plugin"), f.str("db"), stdout, session_exit);
  if (!session) {
    std::fprintf(stderr, "convguard bisect: %s\n", session.status().message().c_str());
    return session_exit;
  }
  auto solver = resolve_solver(f.str("solver"));
  if (!solver) return fail("--solver: " + solver.status().message());
  const std::string sid((*solver)->id());
  const std::string device = f.str("device");

  std::printf("bisect %s on %s, %s from %s to %s\n", sid.c_str(), device.c_str(),
              f.str("vary").empty() ? probe::default_vary(*p).c_str() : f.str("vary").c_str(),
              probe::describe_value(*p, *vary, lo).c_str(),
              probe::describe_value(*p, *vary, hi).c_str());
  int step = 0;
  auto status_at = [&](std::int64_t v) -> Result<std::string> {
    auto q = probe::with_value(*p, *vary, v);
    if (!q) return q.status();
    probe::SweepConfig cfg = session->sweep_config(device);
    cfg.problems = {*q};
    cfg.solvers = {sid};
    cfg.named = {sid};  // never skipped for its expected time: the user asked for it
    cfg.timeout_s = timeout_s;
    cfg.timing_ms = 0;  // statuses, not timings
    cfg.force = cfg.retry_bad = f.on("force");
    std::string status;
    probe::SweepCallbacks cb;
    cb.trial = [&](const probe::SweepEvent& e) { status = e.record.status; };
    auto sum = probe::run_sweep(cfg, *session->store, cb);
    if (!sum) return sum.status();
    std::printf("  step %d: %-14s %s\n", ++step, probe::describe_value(*p, *vary, v).c_str(),
                status.c_str());
    std::fflush(stdout);
    return status;
  };
  auto r = probe::bisect(lo, hi, status_at);
  if (!r) {
    std::fprintf(stderr, "convguard bisect: %s\n", r.status().message().c_str());
    return 1;
  }
  if (!r->found) {
    std::printf(
        "no boundary: %s at both ends (%s and %s). The search assumes one boundary in the "
        "range; narrow it with --range if the status may change and change back.\n",
        r->first_status.c_str(), probe::describe_value(*p, *vary, lo).c_str(),
        probe::describe_value(*p, *vary, hi).c_str());
    return 0;
  }
  std::printf("%s up to %s, %s from %s (%zu trials, recorded in %s)\n", r->first_status.c_str(),
              probe::describe_value(*p, *vary, r->last_first).c_str(), r->other_status.c_str(),
              probe::describe_value(*p, *vary, r->first_other).c_str(), r->steps.size(),
              session->db_path.c_str());
  return 0;
}

}  // namespace convguard::cli
