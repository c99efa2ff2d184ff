// convguard probe: safe find. Every (problem, solver) trial runs in a sandboxed worker process
// under a deadline; hangs, crashes, wrong results and out-of-memory are classified and recorded
// in the results database before and after the trial, so nothing is lost when anything dies.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "convguard/canonical.hpp"
#include "convguard/memory.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/json_text.hpp"
#include "db/record_json.hpp"
#include "db/store.hpp"
#include "device_list.hpp"
#include "flags.hpp"
#include "gpu/gpu.hpp"
#include "models.hpp"
#include "plugins/loader.hpp"
#include "probe/device.hpp"
#include "probe/pool.hpp"
#include "probe/reproduce.hpp"
#include "probe/shard.hpp"
#include "probe/sweep.hpp"
#include "probe/workarounds.hpp"
#include "probe_session.hpp"
#include "results.hpp"
#include "transforms/parse.hpp"
#include "vendor/data_path.hpp"

namespace convguard::cli {
namespace {

std::vector<FlagSpec> probe_flags() {
  return {
      {0, "suite", "", "suite file, or a name under data/suites (standard, resnet50); repeatable",
       false, true},
      {0, "problem", "", "canonical problem string; repeatable", false, true},
      {0, "model", "",
       "a model's conv layers (convguard models lists them), with a verdict for the model; "
       "repeatable",
       false, true},
      {0, "batch", "",
       "batch size of --model layers (default: the file's own; the built-in models have 1)"},
      {0, "device", "",
       "devices to probe: cpu, cuda:N, a plugin device such as hip:N, KIND:all for every device of "
       "a kind, or a list (cuda:0,cuda:1); the devices of one kind run in parallel, one worker "
       "each, over one trial list (default: every device this build and its plugins can drive)"},
      {0, "shard", "",
       "I/N: run shard I of N, a deterministic share of the problems balanced by estimated cost, "
       "for a job array (default: from SLURM_ARRAY_TASK_ID/_COUNT/_MIN when set)"},
      {0, "solvers", "*",
       "comma-separated globs of solver ids to try; transform ids (xform:...) are named whole"},
      {0, "workarounds", "auto",
       "auto: when no plain solver verifies a problem, try transforms around the ones that "
       "failed until one verifies; all: transforms around every solver on every problem; off"},
      {0, "skip-solvers", "", "comma-separated globs of solver ids not to try"},
      {0, "directions", "",
       "fwd,bwd_data,bwd_weights: run each problem in these (default: its own)"},
      {0, "dtypes", "", "f32,f16,bf16: run each problem in these (default: its own)"},
      {0, "timeout", "0",
       "deadline of a solver's first run in seconds (0: derived from the problem's cost); "
       "verification and timing get at least their derived time"},
      {0, "compile-timeout", "600",
       "deadline in seconds of a plugin's compile step (MIOpen's *CompileSolution), before the "
       "trial's own deadline starts; exceeding it is recorded compile_timeout, not hang"},
      {0, "inherit-miopen-env", "",
       "pass your MIOPEN_* variables to the workers (default: removed; each trial records the "
       "MIOPEN_* set it ran under)",
       true},
      {0, "timing", "300",
       "milliseconds of steady-state timing per trial (stops earlier when stable; 0: the first "
       "run is the measurement, for sweeps that only need statuses)"},
      {0, "budget", "10",
       "seconds a slow-but-correct trial may be expected to take before it is skipped"},
      {0, "slow-factor", "",
       "stop a first run (from planning) this many times slower than the fastest first run "
       "already verified on the problem, never before 1 s plus twice the fp64 reference's "
       "expected time, recorded skipped: it would never be chosen; a solver named exactly in "
       "--solvers runs to the end. Default: 10 for convguard's own CPU solvers; vendors' "
       "solvers and GPUs run to the end (their hangs are what a probe is for); given, it "
       "applies to every solver; 0: off"},
      {0, "db", "", "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
      {0, "force", "", "rerun trials already recorded ok", true},
      {0, "retry-bad", "", "rerun trials recorded hang, crash or wrong", true},
      {0, "memory-limit", "",
       "host memory a trial may use (bytes, or K/M/G/T); default: $CONVGUARD_MEMORY_LIMIT, else "
       "90% of available memory. Larger problems are recorded oom before anything is allocated"},
      {0, "jobs", "1",
       "CPU workers, each with an equal share of the threads (timings then differ)"},
      {0, "plugin", "", "plugin shared object to load; repeatable", false, true},
      {0, "seed", "1", "seed of the test data"},
      {0, "json", "", "print every trial as a JSON line", true},
      {0, "csv", "", "print every trial as a CSV row (header first)", true},
      {'h', "help", "", "print this help", true},
  };
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) v.push_back(item);
  }
  return v;
}

bool matches_any(const std::string& id, const std::vector<std::string>& globs) {
  for (const auto& g : globs) {
    if (fnmatch(g.c_str(), id.c_str(), 0) == 0) return true;
  }
  return false;
}

std::string suite_path(const std::string& s) {
  if (std::filesystem::exists(s)) return s;
  return data_path("suites/" + s + ".txt");
}

// A CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

// One line per trial: a JSON object, a CSV row, a log line, or (on a TTY) a progress line that
// is rewritten, with a line of its own for anything that is not ok.
void print_event(const probe::SweepEvent& e, bool json, bool csv, bool tty, bool several,
                 std::map<std::string, int>& seen) {
  using Kind = probe::SweepEvent::Kind;
  const db::TrialRecord& rec = e.record;
  const Problem& p = *e.problem;
  if (e.kind == Kind::reused) return;
  if (e.kind == Kind::known_bad) {
    if (!json && !csv)
      std::printf("[%zu/%zu] %-26s %-11s %s (known bad: %s)\n", e.index, e.total,
                  rec.solver.c_str(), "skipped", rec.problem.c_str(), rec.status.c_str());
    std::fflush(stdout);
    return;
  }
  if (json) {
    // The record's JSON (db/record_json.hpp) cut to what a probe row shows, plus the device that
    // ran it when the sweep has several.
    const nlohmann::json all = db::to_json(rec);
    nlohmann::json j;
    for (const char* key : {"problem", "solver", "status", "reason", "first_ms", "median_ms",
                            "peak_rss_bytes", "signal", "exit_code", "command"})
      j[key] = all[key];
    if (several) j["device_name"] = e.device;
    j["trial_s"] = e.trial_s;
    std::printf("%s\n", json_text(j).c_str());
  } else if (csv) {
    std::printf(
        "%s,%s,%s,%.6f,%.6f,%.6f,%d,%lld,%lld,%.3e,%.3e,%d,%d,%s,%s\n",
        csv_field(rec.problem).c_str(), rec.solver.c_str(), rec.status.c_str(), rec.first_ms,
        rec.median_ms, rec.min_ms, rec.runs, static_cast<long long>(rec.workspace_bytes),
        static_cast<long long>(rec.peak_rss_bytes), rec.rel_error, rec.tolerance, rec.signal,
        rec.exit_code, csv_field(rec.reason).c_str(), csv_field(rec.command).c_str());
  } else {
    const std::string label = p.name.empty() ? rec.problem : p.name;
    const std::string text =
        rec.status == "ok" ? fmt::format("{:.3f} ms", rec.median_ms) : rec.reason;
    ++seen[rec.status];
    if (tty) {
      if (rec.status != "ok" && rec.status != "unsupported") {
        std::printf("\r\033[K%-26s %-11s %s  %s\n", rec.solver.c_str(), rec.status.c_str(),
                    label.c_str(), text.c_str());
      }
      std::string tally;
      for (const auto& [k, v] : seen) tally += fmt::format(" {} {}", v, k);
      std::printf("\r\033[K[%zu/%zu] %.0fs %s %s |%s", e.index, e.total, e.elapsed_s, label.c_str(),
                  rec.solver.c_str(), tally.c_str());
    } else {
      std::printf("[%zu/%zu] %s%-26s %-11s %s  %s\n", e.index, e.total,
                  several ? (e.device + " ").c_str() : "", rec.solver.c_str(), rec.status.c_str(),
                  label.c_str(), text.c_str());
    }
  }
  std::fflush(stdout);
}

// Results per problem from the database (this run's and reused evidence alike): the fastest
// verified solver, how many solvers ended in each status, and the seconds this command's trials
// of it took (`spent`, by problem key: where a long probe's time went).
void print_results_table(db::Store& store, const std::string& fingerprint,
                         const std::vector<Problem>& problems,
                         const std::vector<std::string>& solvers,
                         const std::map<std::string, double>& spent) {
  std::printf("\n%-40s %-34s %10s %8s  %s\n", "problem", "fastest verified solver", "median ms",
              "trials s", "statuses");
  for (const Problem& p : problems) {
    const auto it = spent.find(identity_string(p));
    const ProblemResults r = problem_results(store, fingerprint, p, solvers);
    std::string marks;
    for (const auto& [k, ids] : r.by_status) marks += fmt::format("{} {}  ", ids.size(), k);
    const std::string& best = r.fastest();
    std::printf("%-40.40s %-34s %10s %8.1f  %s\n", problem_label(p).c_str(),
                best.empty() ? "NONE VERIFIED" : best.c_str(),
                best.empty() ? "-" : fmt::format("{:.3f}", r.fastest_ms()).c_str(),
                it == spent.end() ? 0.0 : it->second, marks.c_str());
  }
}

void print_summary(FILE* info, const char* what, const probe::SweepSummary& sum) {
  std::string summary;
  for (const auto& [k, v] : sum.counts) summary += fmt::format("{} {}, ", v, k);
  if (!summary.empty()) summary.resize(summary.size() - 2);
  std::fprintf(
      info,
      "%s finished in %.1f s (%.1f s in workers; hangs cost %.1f s; %d worker start(s)): %s\n",
      what, sum.wall_s, sum.sandbox_s, sum.hang_cost_s, sum.worker_starts,
      summary.empty() ? "nothing to do" : summary.c_str());
}

}  // namespace

int probe_main(int argc, char** argv) {
  Flags f(probe_flags());
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard probe: %s\n", st.message().c_str());
    return 2;
  }
  if (f.on("help")) {
    std::printf("usage: convguard probe [--suite NAME|FILE] [--problem STRING] [flags]\n\n%s",
                f.usage().c_str());
    return 0;
  }
  if (!f.positional().empty()) {
    std::fprintf(stderr, "convguard probe: unexpected argument '%s'\n", f.positional()[0].c_str());
    return 2;
  }
  auto fail = [](const std::string& m) {
    std::fprintf(stderr, "convguard probe: %s\n", m.c_str());
    return 2;
  };
  // Lines for people go to stderr under --json/--csv, so the machine output stays clean.
  const bool json = f.on("json"), csv = f.on("csv");
  if (json && csv) return fail("--json and --csv: choose one");
  FILE* info = json || csv ? stderr : stdout;
  // Plugins (loaded here to list their solvers and devices, handed to the workers) and the
  // database, locked and recovered.
  int session_exit = 0;
  auto session =
      open_probe_session(f.all("plugin"), f.given("db") ? f.str("db") : "", info, session_exit);
  if (!session) {
    std::fprintf(stderr, "convguard probe: %s\n", session.status().message().c_str());
    return session_exit;
  }
  db::Store& store = *session->store;
  // Devices: the ones named, else every device this build and its plugins can drive.
  PresentDevices present{
      gpu::backend(), gpu::device_count(), plugins::plugin_device_names(),
      [](const std::string& kind) { return plugins::is_plugin_device(kind + ":0"); }};
  auto devices = expand_devices(f.str("device"), present);
  if (!devices) return fail(devices.status().message());
  // A job array's share (--shard, else Slurm's variables), applied to the problems below.
  std::optional<probe::Shard> shard;
  std::string shard_source = "--shard";
  if (f.given("shard")) {
    auto s = probe::parse_shard(f.str("shard"));
    if (!s) return fail("--shard: " + s.status().message());
    shard = *s;
  } else {
    auto s = probe::shard_from_slurm([](const char* name) { return std::getenv(name); });
    if (!s) return fail(s.status().message() + " (or give --shard I/N)");
    shard = *s;
    shard_source = "SLURM_ARRAY_TASK_ID";
  }
  auto jobs = f.integer("jobs");
  if (!jobs) return fail(jobs.status().message());
  if (*jobs < 1 || *jobs > 64) return fail("--jobs: must be 1 to 64 workers");
  auto seed = f.integer("seed");
  if (!seed) return fail(seed.status().message());
  // Finite and bounded: inf or nan would switch the deadline or the budget off.
  auto timeout = f.number_in("timeout", 0, 7 * 24 * 3600.0);
  if (!timeout) return fail(timeout.status().message());
  auto budget = f.number_in("budget", 1e-3, 7 * 24 * 3600.0);
  if (!budget) return fail(budget.status().message());
  auto compile_timeout = f.number_in("compile-timeout", 1e-3, 7 * 24 * 3600.0);
  if (!compile_timeout) return fail(compile_timeout.status().message());
  auto timing = f.number_in("timing", 0, 3600e3);
  if (!timing) return fail(timing.status().message());
  const double timeout_s = *timeout, budget_s = *budget, timing_ms = *timing;
  std::optional<double> slow_factor;  // unset: each device's default
  if (f.given("slow-factor")) {
    auto v = f.number_in("slow-factor", 0, 1e9);
    if (!v) return fail(v.status().message());
    if (*v > 0 && *v < 1) return fail("--slow-factor: must be 0 (off) or at least 1");
    slow_factor = *v;
  }
  if (f.given("memory-limit")) {
    auto limit = parse_memory_size(f.str("memory-limit").c_str());
    if (!limit) return fail("--memory-limit: " + limit.status().message());
    // Workers inherit it (the pool passes the environment on).
    ::setenv("CONVGUARD_MEMORY_LIMIT", std::to_string(*limit).c_str(), 1);
  }

  // Problems.
  std::vector<Problem> base;
  for (const auto& s : f.all("problem")) {
    auto p = parse_problem(s);
    if (!p) return fail("--problem: " + p.status().message());
    base.push_back(*p);
  }
  // Models: their layers, and which base problems belong to which model (for the verdicts).
  std::vector<std::string> models;
  std::vector<int> base_model(base.size(), -1);
  // 0: each layer keeps the batch its file gives (a suite from convguard.torch.extract_suite).
  Result<std::int64_t> batch = std::int64_t{0};
  if (!f.str("batch").empty()) batch = f.integer_in("batch", 1, kMaxFieldValue);
  if (!batch) return fail(batch.status().message());
  for (const auto& name : f.all("model")) {
    auto m = load_model(name, *batch);
    if (!m) return fail(m.status().message());
    base.insert(base.end(), m->layers.begin(), m->layers.end());
    base_model.resize(base.size(), static_cast<int>(models.size()));
    models.push_back(m->name);
  }
  std::vector<std::string> suites = f.all("suite");
  if (suites.empty() && base.empty()) suites.push_back("standard");
  for (const auto& s : suites) {
    auto suite = read_problem_file(suite_path(s));
    if (!suite) return fail("--suite: " + suite.status().message());
    base.insert(base.end(), suite->begin(), suite->end());
  }
  base_model.resize(base.size(), -1);
  std::vector<Problem> problems;
  std::vector<int> problem_model;  // per problem, its model's index or -1
  const auto dirs = split(f.str("directions"));
  const auto dtypes = split(f.str("dtypes"));
  for (const Problem& p : base) {
    std::vector<Direction> ds;
    for (const auto& d : dirs) {
      if (d == "fwd")
        ds.push_back(Direction::forward);
      else if (d == "bwd_data")
        ds.push_back(Direction::backward_data);
      else if (d == "bwd_weights")
        ds.push_back(Direction::backward_weights);
      else
        return fail(fmt::format("--directions: '{}' is not fwd, bwd_data or bwd_weights", d));
    }
    if (ds.empty()) ds.push_back(p.direction);
    std::vector<DType> ts;
    for (const auto& t : dtypes) {
      auto dt = parse_dtype(t);
      if (!dt) return fail(fmt::format("--dtypes: '{}' is not f32, f16 or bf16", t));
      ts.push_back(*dt);
    }
    if (ts.empty()) ts.push_back(p.dtype);
    for (Direction d : ds)
      for (DType t : ts) {
        Problem q = p;
        q.direction = d;
        q.dtype = t;
        problems.push_back(q);
        problem_model.push_back(base_model[static_cast<std::size_t>(&p - base.data())]);
      }
  }
  std::string shard_note;
  if (shard) {
    // Whole problems, so a model's verdict would cover only this shard's layers: none is given.
    double all = 0, mine = 0;
    for (const Problem& p : problems) all += probe::trial_cost(p);
    std::vector<Problem> kept;
    std::vector<int> kept_model;
    for (std::size_t i : probe::shard_problems(problems, *shard)) {
      kept.push_back(problems[i]);
      kept_model.push_back(-1);
      mine += probe::trial_cost(problems[i]);
    }
    shard_note = fmt::format("shard {}/{} ({}): {} of {} problems, {:.0f}% of the estimated cost\n",
                             shard->index, shard->count, shard_source, kept.size(), problems.size(),
                             all > 0 ? 100 * mine / all : 0.0);
    if (!models.empty())
      shard_note += "model verdicts need every layer: none is given for a shard\n";
    models.clear();
    problems = std::move(kept);
    problem_model = std::move(kept_model);
  }
  // Solvers.
  const auto want = split(f.str("solvers")), skip = split(f.str("skip-solvers"));
  // Per device, the solvers that run on it.
  auto solvers_for = [&](const std::string& device) {
    const bool plugin = plugins::is_plugin_device(device);
    const Device kind = device == "cpu" ? Device::cpu : plugin ? Device::plugin : Device::gpu;
    const std::string plugin_kind = plugin ? device.substr(0, device.find(':')) : "";
    std::vector<std::string> ids;
    for (const Solver* s : all_solvers()) {
      const std::string id(s->id());
      if (s->device() == kind && s->plugin_device() == plugin_kind && matches_any(id, want) &&
          !matches_any(id, skip))
        ids.push_back(id);
    }
    for (const std::string& w : want) {
      const Solver* s = transforms::is_transform_id(w) ? find_solver(w) : nullptr;
      if (s && s->device() == kind && s->plugin_device() == plugin_kind) ids.emplace_back(s->id());
    }
    return ids;
  };
  for (const std::string& w : want) {
    if (!transforms::is_transform_id(w)) continue;
    if (auto s = resolve_solver(w); !s) return fail("--solvers: " + s.status().message());
  }
  const auto workarounds = probe::parse_workaround_mode(f.str("workarounds"));
  if (!workarounds)
    return fail(fmt::format("--workarounds: '{}' is not auto, all or off", f.str("workarounds")));
  std::size_t solver_count = 0;
  for (const auto& d : *devices) solver_count += solvers_for(d).size();
  if (solver_count == 0)
    return fail("--solvers/--skip-solvers: no solver left to try on " + f.str("device") +
                " (convguard solvers lists them)");

  const bool tty = !json && !csv && isatty(STDOUT_FILENO);
  if (csv) {
    std::printf(
        "problem,solver,status,first_ms,median_ms,min_ms,runs,workspace_bytes,peak_rss_bytes,"
        "rel_error,tolerance,signal,exit_code,reason,command\n");
  }
  if (!shard_note.empty()) std::fprintf(info, "%s", shard_note.c_str());
  int status = 0;
  for (const std::vector<std::string>& names : device_sweeps(*devices)) {
    const std::string& device = names.front();  // all of one kind: the same solvers
    if (solvers_for(device).empty()) continue;
    const bool several = names.size() > 1;
    probe::SweepConfig cfg = session->sweep_config(device);
    if (several) cfg.devices = names;
    cfg.problems = problems;
    cfg.solvers = solvers_for(device);
    cfg.named = want;
    cfg.timeout_s = timeout_s;
    cfg.compile_timeout_s = *compile_timeout;
    cfg.inherit_miopen_env = f.on("inherit-miopen-env");
    cfg.budget_s = budget_s;
    probe::set_slow_factor(cfg, slow_factor);  // (sweep.hpp says why the default is narrow)
    cfg.timing_ms = timing_ms;
    cfg.force = f.on("force");
    cfg.retry_bad = f.on("retry-bad");
    cfg.jobs = device == "cpu" ? static_cast<int>(*jobs) : 1;  // one worker per GPU
    cfg.seed = static_cast<std::uint64_t>(*seed);
    std::vector<std::string> announced;  // fingerprints said (the workaround sweep's again)
    std::map<std::string, int> seen;
    probe::SweepCallbacks cb;
    cb.started = [&](const probe::SweepDevice& d, std::size_t) {
      if (std::find(announced.begin(), announced.end(), d.fingerprint) != announced.end()) return;
      announced.push_back(d.fingerprint);
      if (announced.size() > 1) {
        std::fprintf(info, "device %s (another fingerprint: a trial list of its own)\n",
                     d.description.c_str());
        return;
      }
      std::fprintf(info, "device %s\ndatabase %s\n%zu problems x %zu solvers%s\n",
                   d.description.c_str(), session->db_path.c_str(), problems.size(),
                   cfg.solvers.size(),
                   several ? fmt::format(" on {} devices ({}), one worker each, one trial list "
                                         "per device fingerprint",
                                         names.size(), fmt::join(names, ","))
                                 .c_str()
                   : cfg.jobs > 1 ? fmt::format(" on {} workers", cfg.jobs).c_str()
                                  : "");
      std::fflush(info);
    };
    std::map<std::string, double> spent;  // per problem key: its trials' seconds, this command
    cb.trial = [&](const probe::SweepEvent& e) {
      spent[e.record.problem] += e.trial_s;
      print_event(e, json, csv, tty, several, seen);
    };
    // One sweep with these callbacks; a failure is said and sets the exit status, and so does a
    // device left out (its share went to the others, but the user asked for it).
    const auto sweep = [&](const probe::SweepConfig& c) -> std::optional<probe::SweepSummary> {
      auto r = probe::run_sweep(c, store, cb);
      if (!r) {
        std::fprintf(stderr, "convguard probe: %s\n", r.status().message().c_str());
        status = 1;
        return std::nullopt;
      }
      if (tty) std::printf("\n");
      for (const std::string& lost : r->lost) {
        std::fprintf(stderr, "convguard probe: device lost: %s\n", lost.c_str());
        status = std::max(status, 1);
      }
      return std::move(*r);
    };
    auto sum = sweep(cfg);
    if (!sum) continue;
    for (const probe::SweepDevice& d : sum->devices) {
      if (json || csv) continue;
      if (sum->devices.size() > 1)
        std::printf("\non %s:", fmt::format("{}", fmt::join(d.names, ",")).c_str());
      print_results_table(store, d.fingerprint, problems, cfg.solvers, spent);
    }
    print_summary(info, "probe", *sum);
    if (sum->interrupted || probe::stop_requested()) {
      // Stopped by the user: what finished is recorded, the trial cut off is `interrupted` (not
      // evidence), and a rerun resumes from there.
      std::fprintf(info,
                   "probe interrupted by the user: finished trials are recorded; run the "
                   "same command again to resume\n");
      return 130;
    }
    // Per device fingerprint: workarounds around what failed there, and the models' verdicts.
    for (const probe::SweepDevice& d : sum->devices) {
      probe::SweepConfig dcfg = cfg;
      // Several devices only where the sweep had several (with --jobs N one device has N
      // workers, which its single-device sweep makes again).
      dcfg.devices =
          !cfg.devices.empty() && d.names.size() > 1 ? d.names : std::vector<std::string>{};
      dcfg.device = d.names.front();
      const std::string& fingerprint = d.fingerprint;
      // Workarounds: transforms around the solvers that failed, recorded like any trial.
      probe::SweepConfig wcfg = dcfg;
      wcfg.named.clear();
      wcfg.stop_at_first_ok = *workarounds == probe::WorkaroundMode::automatic;
      std::size_t tries = 0, needing = 0;
      std::vector<std::string> used = cfg.solvers;
      for (const Problem& p : problems) {
        wcfg.solvers_per_problem.push_back(
            probe::workaround_candidates(p, cfg.solvers, store, fingerprint, *workarounds));
        tries += wcfg.solvers_per_problem.back().size();
        needing += wcfg.solvers_per_problem.back().empty() ? 0 : 1;
        for (const std::string& id : wcfg.solvers_per_problem.back())
          if (std::find(used.begin(), used.end(), id) == used.end()) used.push_back(id);
      }
      if (tries > 0) {
        std::fprintf(
            info,
            "\nworkarounds (--workarounds %s): up to %zu transform trial(s) for %zu problem(s)%s\n",
            f.str("workarounds").c_str(), tries, needing,
            sum->devices.size() > 1 ? (" on " + fmt::format("{}", fmt::join(d.names, ","))).c_str()
                                    : "");
        seen.clear();
        auto wsum = sweep(wcfg);
        if (!wsum) continue;
        if (!json && !csv) {
          std::vector<Problem> helped;
          for (std::size_t i = 0; i < problems.size(); ++i)
            if (!wcfg.solvers_per_problem[i].empty()) helped.push_back(problems[i]);
          print_results_table(store, fingerprint, helped, used, spent);
        }
        print_summary(info, "workarounds", *wsum);
      }
      // Per model, its verdict from everything now recorded; a model that fails: exit 4.
      if (print_model_verdicts(info, models, problem_model, problems, used, store, fingerprint) ==
          2)
        status = std::max(status, 4);
    }
  }
  return status;
}

}  // namespace convguard::cli
