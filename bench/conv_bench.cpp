// convguard_bench: convguard's best verified CPU solver per problem against oneDNN, in every
// direction and dtype, interleaved in the same run (oneDNN, every convguard solver, oneDNN with
// reorders, then again), since this machine's clock drifts 1.2-1.5x over minutes and only
// side-by-side ratios mean anything. Each side's time is its fastest run. A problem gets --reps
// rounds, or more where its rounds are short (until --round-ms milliseconds have gone into them,
// at most 100 rounds): the fastest of 3 runs of a 20 us problem is noise, one slow wake-up of a
// thread deciding it, where the fastest of 3 runs of a 10 ms layer is not. Where a round takes
// under 20 ms, each side runs twice in a row in it (bench_problem says why).
//
//   convguard_bench --suite data/suites/resnet50.txt [--reps 5] [--round-ms 100] [--threads N]
//                   [--solver ID] [--directions fwd,bwd_data,bwd_weights] [--dtypes f32,bf16]
//                   [--problem STR]
//
// Every suite problem is run in each listed direction and dtype, on the caller's layout it names
// (NCHW unless the suite says otherwise). A convguard solver counts only after its output
// verified against the fp64 reference (sampled above 2e8 multiply-adds) and only while every
// timed run succeeded; oneDNN's runs are checked likewise. Two ratios per problem (> 1:
// convguard is faster):
//   vs exec:  oneDNN's convolution alone, on the layouts it prefers (format_tag::any);
//   vs ro:    oneDNN plus the reorders a caller with plain tensors pays per call (inputs in,
//             output out) -- what convguard's time includes.
// Geomeans per direction and dtype, and per direction, close the report.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/host_buffer.hpp"

#ifdef CONVGUARD_HAVE_DNNL
#include "onednn_peer.hpp"
#endif

using namespace convguard;

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

struct Args {
  std::vector<std::string> suites, problems;
  int reps = 5;
  double round_ms = 100;  // rounds past reps until this much time went into a problem's rounds
  std::string solver;
  std::vector<Direction> directions{Direction::forward, Direction::backward_data,
                                    Direction::backward_weights};
  std::vector<DType> dtypes{DType::f32, DType::bf16};
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "convguard_bench: %s\nusage: convguard_bench --suite FILE|--problem STRING [--reps "
               "N] [--round-ms MS] [--threads N] [--solver ID] [--directions "
               "fwd,bwd_data,bwd_weights] [--dtypes f32,bf16]\n",
               why);
  std::exit(2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(',', start), s.size());
    if (end > start) v.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return v;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage((s + " needs a value").c_str());
      return argv[++i];
    };
    if (s == "--suite") {
      a.suites.push_back(value());
    } else if (s == "--problem") {
      a.problems.push_back(value());
    } else if (s == "--reps") {
      a.reps = std::atoi(value().c_str());
    } else if (s == "--round-ms") {
      const std::string v = value();
      char* end = nullptr;
      a.round_ms = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(a.round_ms >= 0 && a.round_ms <= 1e5))
        usage(("--round-ms: a number of milliseconds from 0 to 100000, not '" + v + "'").c_str());
    } else if (s == "--threads") {
      omp_set_num_threads(std::atoi(value().c_str()));
    } else if (s == "--solver") {
      a.solver = value();
    } else if (s == "--directions") {
      a.directions.clear();
      for (const std::string& d : split(value())) {
        if (d == "fwd")
          a.directions.push_back(Direction::forward);
        else if (d == "bwd_data")
          a.directions.push_back(Direction::backward_data);
        else if (d == "bwd_weights")
          a.directions.push_back(Direction::backward_weights);
        else
          usage(("unknown direction " + d).c_str());
      }
    } else if (s == "--dtypes") {
      a.dtypes.clear();
      for (const std::string& t : split(value())) {
        const auto dt = parse_dtype(t);
        if (!dt) usage(("unknown dtype " + t).c_str());
        a.dtypes.push_back(*dt);
      }
    } else {
      usage(("unknown argument " + s).c_str());
    }
  }
  if ((a.suites.empty() && a.problems.empty()) || a.reps < 1)
    usage("give --suite FILE or --problem STRING (and --reps >= 1)");
  return a;
}

// Every problem of the suites, in each direction and dtype asked for, each once.
std::vector<Problem> expand(const Args& a) {
  std::vector<Problem> base, out;
  for (const auto& path : a.suites) {
    auto suite = read_problem_file(path);
    if (!suite) usage(("--suite: " + suite.status().message()).c_str());
    base.insert(base.end(), suite->begin(), suite->end());
  }
  for (const auto& text : a.problems) {
    auto p = parse_problem(text);
    if (!p) usage(("--problem: " + p.status().message()).c_str());
    base.push_back(*p);
  }
  std::set<std::string> seen;
  for (const Direction d : a.directions) {
    for (const DType t : a.dtypes) {
      for (Problem p : base) {
        p.direction = d, p.dtype = t;
        if (seen.insert(identity_string(p)).second) out.push_back(p);
      }
    }
  }
  return out;
}

// One own solver under test: its plan, workspace and fastest time; planless once it failed.
struct Candidate {
  const Solver* solver;
  std::unique_ptr<Plan> plan;
  // From allocate_host_buffer, as ConvPlan's and the trials' workspaces are (64-byte aligned). A
  // std::vector here (16-byte aligned) put AMX tile rows across two lines in the bench alone,
  // until session 29.
  std::unique_ptr<std::byte, void (*)(void*)> ws_buffer{nullptr, &std::free};
  std::span<std::byte> ws;
  double best = INFINITY;
  double warm = 0;  // its warm-up run's time: what a round costs
};

std::string joined(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + ", " + b;
}

// The verified own solvers of p, warmed up; those >10x slower than the fastest are dropped.
std::vector<Candidate> candidates(const Problem& p, TrialTensors& t, const Args& a,
                                  std::string& notes) {
  TrialOptions o;
  o.full_reference_limit = 2e8;  // sampled verification above: the bench is about time
  std::vector<Candidate> v;
  double fastest = INFINITY;
  for (const Solver* s : solvers_on(Device::cpu)) {
    const std::string id(s->id());
    if (!id.starts_with("cpu:") || id == "cpu:ref" || !s->check(p).is_ok()) continue;
    if (!a.solver.empty() && id != a.solver) continue;
    const TrialResult r = run_trial(*s, p, t, o);
    if (!r.ran() || !r.verdict || !r.verdict->ok) {
      notes = joined(notes, id + (r.ran() ? " WRONG: " + r.verdict->message
                                          : " FAILED: " + r.status.message()));
      continue;
    }
    Candidate c{s, nullptr, {nullptr, &std::free}, {}};
    const std::size_t bytes = *s->workspace_bytes(p);
    c.ws_buffer.reset(static_cast<std::byte*>(allocate_host_buffer(bytes)));
    if (!c.ws_buffer) {
      notes = joined(notes, id + " FAILED: no memory for its workspace");
      continue;
    }
    c.ws = {c.ws_buffer.get(), bytes};
    auto plan = s->plan(p);
    if (!plan) {
      notes = joined(notes, id + " FAILED: " + plan.status().message());
      continue;
    }
    c.plan = std::move(*plan);
    const double t0 = now_ms();
    const Status st = s->run(*c.plan, t.view(), c.ws);
    const double warm = now_ms() - t0;
    if (!st.is_ok()) {
      notes = joined(notes, id + " FAILED: " + st.message());
      continue;
    }
    if (warm > 10 * fastest && warm > 20) {
      notes = joined(notes, id + " >10x slower, not timed");
      continue;
    }
    fastest = std::min(fastest, warm);
    c.warm = warm;
    v.push_back(std::move(c));
  }
  return v;
}

struct Row {
  std::string own_id = "-";
  double own = NAN, exec = NAN, ro = NAN;
};

Row bench_problem(const Problem& p, const Args& a, std::string& notes) {
  TrialTensors t(p);
  fill_inputs(p, t, 1, FillMode::uniform);
  std::vector<Candidate> own = candidates(p, t, a, notes);
  Row row;
  double exec = INFINITY, ro = INFINITY;
  double round = 0;  // a round's time, from the warm-up runs
  for (const Candidate& c : own) round += c.warm;
#ifdef CONVGUARD_HAVE_DNNL
  std::unique_ptr<bench::OnednnPeer> peer;
  if (auto made = bench::OnednnPeer::create(p, t.view()); made) {
    peer = std::move(*made);
    const double t0 = now_ms();
    Status st = peer->exec();  // warm-up
    if (st.is_ok()) st = peer->with_reorders();
    round += now_ms() - t0;
    if (st.is_ok()) {
      notes = joined(notes, "oneDNN " + peer->implementation());
    } else {
      notes = joined(notes, "oneDNN FAILED: " + st.message());
      peer.reset();
    }
  } else {
    notes = joined(notes, "oneDNN declined: " + made.status().message());
  }
#endif
  // Short problems fit in the caches, and what ran just before a timed run decides what of its
  // tensors is still there: oneDNN's exec follows its own run with reorders of the round before,
  // a convguard solver another solver's run over other buffers. So there each side runs twice in
  // a row, both timed: the second run finds its own data, as a layer in a loop would.
  const int runs = round < 20 ? 2 : 1;
#ifdef CONVGUARD_HAVE_DNNL
  auto time_peer = [&](bool reorders, double& best) {
    for (int i = 0; i < runs && peer; ++i) {
      const double t0 = now_ms();
      const Status st = reorders ? peer->with_reorders() : peer->exec();
      if (!st.is_ok()) {
        notes = joined(notes, "oneDNN FAILED: " + st.message());
        peer.reset();
        return;
      }
      best = std::min(best, now_ms() - t0);
    }
  };
#endif
  const int reps = std::max(
      a.reps, static_cast<int>(std::min(100.0, std::ceil(a.round_ms / std::max(round, 1e-3)))));
  for (int r = 0; r < reps; ++r) {
#ifdef CONVGUARD_HAVE_DNNL
    time_peer(false, exec);
#endif
    for (Candidate& c : own) {
      for (int i = 0; i < runs && c.plan; ++i) {
        const double t0 = now_ms();
        const Status st = c.solver->run(*c.plan, t.view(), c.ws);
        const double ms = now_ms() - t0;
        if (!st.is_ok()) {
          notes = joined(notes, std::string(c.solver->id()) + " FAILED: " + st.message());
          c.plan.reset();
          continue;
        }
        c.best = std::min(c.best, ms);
      }
    }
#ifdef CONVGUARD_HAVE_DNNL
    time_peer(true, ro);
#endif
  }
  for (const Candidate& c : own) {
    if (c.plan && !(c.best >= row.own)) row.own = c.best, row.own_id = std::string(c.solver->id());
  }
#ifdef CONVGUARD_HAVE_DNNL
  if (peer) row.exec = exec, row.ro = ro;
#endif
  std::string others;
  for (const Candidate& c : own) {
    if (!c.plan || std::string(c.solver->id()) == row.own_id) continue;
    char ms[32];
    std::snprintf(ms, sizeof ms, " %.3f", c.best);
    others += " " + std::string(c.solver->id()) + ms;
  }
  if (!others.empty()) notes = joined(notes, "others (ms):" + others);
  return row;
}

struct Geomean {
  double log_exec = 0, log_ro = 0;
  int n = 0;
  void add(const Row& r) {
    if (!std::isfinite(r.exec / r.own) || !std::isfinite(r.ro / r.own)) return;
    log_exec += std::log(r.exec / r.own), log_ro += std::log(r.ro / r.own), ++n;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  const std::vector<Problem> problems = expand(a);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf(
      "threads %d, reps %d, or more while a problem's rounds took under %g ms (at most 100; "
      "fastest of each), caller's layout as the suite names it\n",
      omp_get_max_threads(), a.reps, a.round_ms);
#ifdef CONVGUARD_HAVE_DNNL
  std::printf("peer: %s\n", bench::onednn_version().c_str());
#else
  std::printf(
      "peer: none: oneDNN was not found when this was configured (install libdnnl-dev); "
      "the comparison is off, only convguard's times are shown\n");
#endif
  std::printf("%-36s %-11s %-4s %7s %-26s %9s %9s %9s %7s %7s\n", "problem", "dir", "dt", "GFLOP",
              "best verified convguard", "cg ms", "dnnl ms", "dnnl+ro", "vs exec", "vs ro");
  std::map<std::string, Geomean> by_dir_dtype, by_dir;
  // bf16 against oneDNN's fp32 on the same problem: on a CPU without AVX512_BF16 oneDNN emulates
  // bf16 (several times slower than its fp32), so beating its bf16 says little; a bf16 caller
  // could as well convert and run oneDNN's fp32. Keyed by the problem's identity as fp32 (names
  // need not be unique, and an unnamed problem's identity names its dtype).
  std::map<std::string, double> f32_exec;
  std::map<std::string, Geomean> bf16_vs_f32;
  struct Bf16Row {
    std::string same, dir;
    Row r;
  };
  std::vector<Bf16Row> bf16_rows;
  for (const Problem& p : problems) {
    std::string notes;
    const Row r = bench_problem(p, a, notes);
    const std::string name = p.name.empty() ? identity_string(p) : p.name;
    const std::string dir(to_string(p.direction)), dt(to_string(p.dtype));
    std::printf("%-36.36s %-11s %-4s %7.2f %-26s %9.3f %9.3f %9.3f %7.2f %7.2f\n", name.c_str(),
                dir.c_str(), dt.c_str(), p.flops() / 1e9, r.own_id.c_str(), r.own, r.exec, r.ro,
                r.exec / r.own, r.ro / r.own);
    std::printf("    convguard driver --problem '%s' -S %s -t 1 --threads %d -i 100\n",
                identity_string(p).c_str(), r.own_id.c_str(), omp_get_max_threads());
    if (!notes.empty()) std::printf("    %s\n", notes.c_str());
    by_dir_dtype[dir + " " + dt].add(r);
    by_dir[dir].add(r);
    Problem as_f32 = p;
    as_f32.dtype = DType::f32;
    as_f32.name.clear();
    const std::string same = identity_string(as_f32);
    if (p.dtype == DType::f32) f32_exec[same] = r.exec;
    if (p.dtype == DType::bf16) bf16_rows.push_back({same, dir, r});
  }
  for (const auto& [same, dir, r] : bf16_rows) {
    if (!f32_exec.contains(same)) continue;
    Row vs = r;
    vs.exec = vs.ro = f32_exec[same];  // no reorder figure of its own: the exec one twice
    bf16_vs_f32[dir].add(vs);
  }
  std::printf("geomean convguard speed / oneDNN speed (> 1: convguard faster):\n");
  for (const auto* m : {&by_dir_dtype, &by_dir}) {
    for (const auto& [key, g] : *m) {
      if (g.n == 0) continue;
      std::printf("  %-18s over %3d problems: vs exec %.3f, vs with-reorders %.3f\n", key.c_str(),
                  g.n, std::exp(g.log_exec / g.n), std::exp(g.log_ro / g.n));
    }
  }
  if (!bf16_vs_f32.empty())
    std::printf("geomean convguard bf16 speed / oneDNN fp32 speed, same problems (%s):\n",
                __builtin_cpu_supports("avx512bf16")
                    ? "this CPU has AVX512_BF16"
                    : "this CPU has no AVX512_BF16: oneDNN's bf16 is emulated");
  for (const auto& [dir, g] : bf16_vs_f32)
    if (g.n > 0)
      std::printf("  %-18s over %3d problems: vs fp32 exec %.3f\n", dir.c_str(), g.n,
                  std::exp(g.log_exec / g.n));
  return 0;
}
