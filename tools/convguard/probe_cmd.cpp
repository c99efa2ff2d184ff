// convguard probe: safe find. Every (problem, solver) trial runs in a sandboxed worker process
// under a deadline; hangs, crashes, wrong results and out-of-memory are classified and recorded
// in the results database before and after the trial, so nothing is lost when anything dies.
#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "db/store.hpp"
#include "flags.hpp"
#include "plugins/loader.hpp"
#include "probe/device.hpp"
#include "probe/pool.hpp"
#include "reproduce.hpp"

namespace convguard::cli {
namespace {

std::vector<FlagSpec> probe_flags() {
  return {
      {0, "suite", "", "suite file, or a name under data/suites (standard, resnet50); repeatable",
       false, true},
      {0, "problem", "", "canonical problem string; repeatable", false, true},
      {0, "device", "cpu", "device to probe (this build: cpu)"},
      {0, "solvers", "*", "comma-separated globs of solver ids to try"},
      {0, "skip-solvers", "", "comma-separated globs of solver ids not to try"},
      {0, "directions", "",
       "fwd,bwd_data,bwd_weights: run each problem in these (default: its own)"},
      {0, "dtypes", "", "f32,f16,bf16: run each problem in these (default: its own)"},
      {0, "timeout", "0", "deadline per trial in seconds (0: derived from the problem's cost)"},
      {0, "budget", "60",
       "seconds a slow-but-correct trial may be expected to take before it is skipped"},
      {0, "db", "", "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
      {0, "force", "", "rerun trials already recorded ok", true},
      {0, "retry-bad", "", "rerun trials recorded hang, crash or wrong", true},
      {0, "jobs", "1", "workers per device"},
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
  const char* dir = std::getenv("CONVGUARD_DATA_DIR");
  return std::string(dir ? dir : CONVGUARD_DATA_DIR) + "/suites/" + s + ".txt";
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// A CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
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
  if (f.str("device") != "cpu")
    return fail(fmt::format("--device: '{}' is not available in this build (available: cpu)",
                            f.str("device")));
  auto jobs = f.integer("jobs");
  if (!jobs) return fail(jobs.status().message());
  if (*jobs != 1) return fail("--jobs: only 1 worker per device is implemented so far");
  auto seed = f.integer("seed");
  if (!seed) return fail(seed.status().message());
  double timeout_s = 0, budget_s = 0;
  try {
    timeout_s = std::stod(f.str("timeout"));
    budget_s = std::stod(f.str("budget"));
  } catch (const std::exception&) {
    return fail("--timeout/--budget: not a number of seconds");
  }
  if (timeout_s < 0 || budget_s <= 0)
    return fail("--timeout must be >= 0 and --budget > 0 seconds");

  // Plugins: loaded here to list their solvers, and handed to the worker.
  std::vector<std::string> plugin_paths = f.all("plugin");
  for (const auto& rep : plugins::load(plugin_paths)) {
    if (!rep.loaded) return fail(fmt::format("--plugin {}: {}", rep.path, rep.message));
  }
  std::string plugin_env;
  if (const char* e = std::getenv("CONVGUARD_PLUGINS")) plugin_env = e;
  for (const auto& p : plugin_paths) {
    plugin_env += (plugin_env.empty() ? "" : ":") + std::filesystem::absolute(p).string();
  }

  // Problems.
  std::vector<Problem> base;
  for (const auto& s : f.all("problem")) {
    auto p = parse_problem(s);
    if (!p) return fail("--problem: " + p.status().message());
    base.push_back(*p);
  }
  std::vector<std::string> suites = f.all("suite");
  if (suites.empty() && base.empty()) suites.push_back("standard");
  for (const auto& s : suites) {
    auto suite = read_problem_file(suite_path(s));
    if (!suite) return fail("--suite: " + suite.status().message());
    base.insert(base.end(), suite->begin(), suite->end());
  }
  std::vector<Problem> problems;
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
      }
  }
  // Solvers.
  const auto want = split(f.str("solvers")), skip = split(f.str("skip-solvers"));
  std::vector<std::string> solvers;
  for (const Solver* s : all_solvers()) {
    const std::string id(s->id());
    if (matches_any(id, want) && !matches_any(id, skip)) solvers.push_back(id);
  }
  if (solvers.empty())
    return fail("--solvers/--skip-solvers: no solver left to try (convguard solvers lists them)");

  // Database: lock, recover trials left running by a dead prober, register the device.
  const std::string db_path = f.given("db") ? f.str("db") : db::default_path();
  auto store = db::Store::open(db_path);
  if (!store) return fail(store.status().message());
  if (auto st = (*store)->lock_for_writing(); !st) {
    std::fprintf(stderr, "convguard probe: %s\n", st.message().c_str());
    return 3;
  }
  // Lines for people go to stderr under --json/--csv, so the machine output stays clean.
  const bool machine = f.on("json") || f.on("csv");
  FILE* info = machine ? stderr : stdout;
  auto recovered = (*store)->recover_running();
  if (!recovered) return fail(recovered.status().message());
  if (*recovered > 0) {
    std::fprintf(info,
                 "recovered %d trial(s) left running by an earlier probe: recorded as crash\n",
                 *recovered);
  }
  const probe::DeviceInfo dev = probe::cpu_device();
  if (auto st = (*store)->add_device(dev.fingerprint, dev.description); !st)
    return fail(st.message());
  std::fprintf(info, "device %s\ndatabase %s\n%zu problems x %zu solvers\n",
               dev.description.c_str(), db_path.c_str(), problems.size(), solvers.size());

  std::vector<std::string> env;
  if (!plugin_env.empty()) env.push_back("CONVGUARD_PLUGINS=" + plugin_env);
  probe::Worker worker({"/proc/self/exe", "worker"}, env);
  if (auto st = worker.ensure_started(); !st) {
    std::fprintf(stderr, "convguard probe: worker start-up failed: %s\n", st.message().c_str());
    return 1;
  }
  const double gflops = std::max(1.0, worker.gflops());
  std::map<std::string, int> counts;
  double hang_cost = 0, sandbox_s = 0;
  const double t0 = now_s();
  const std::size_t total = problems.size() * solvers.size();
  std::size_t index = 0;
  const bool force = f.on("force"), retry_bad = f.on("retry-bad"), json = f.on("json"),
             csv = f.on("csv");
  const bool tty = !json && !csv && isatty(STDOUT_FILENO);
  std::map<std::string, int> seen;
  if (json && csv) return fail("--json and --csv: choose one");
  if (csv) {
    std::printf(
        "problem,solver,status,first_ms,median_ms,min_ms,runs,workspace_bytes,rel_error,tolerance,"
        "signal,"
        "exit_code,reason,command\n");
  }
  for (const Problem& p : problems) {
    const std::string key = identity_string(p);
    for (const std::string& sid : solvers) {
      ++index;
      db::TrialRecord rec;
      rec.device = dev.fingerprint;
      rec.problem = key;
      rec.solver = sid;
      rec.command = (plugin_env.empty() ? "" : "CONVGUARD_PLUGINS=" + plugin_env + " ") +
                    reproduce_command(key, sid);
      std::string note;
      if (auto prev = (*store)->find(dev.fingerprint, key, sid)) {
        const bool bad =
            prev->status == "hang" || prev->status == "crash" || prev->status == "wrong";
        if ((prev->status == "ok" || prev->status == "unsupported") && !force) {
          ++counts["reused"];
          continue;
        }
        if (bad && !retry_bad) {
          ++counts["known bad"];
          if (!json)
            std::printf("[%zu/%zu] %-26s %-11s %s (known bad: %s)\n", index, total, sid.c_str(),
                        "skipped", key.c_str(), prev->status.c_str());
          continue;
        }
      }
      // Slow but correct is not a hang: skip what would blow the per-trial budget.
      const double solver_gflops = sid == "cpu:ref" ? 1.0 : gflops;
      const double expected_s = p.flops() / (solver_gflops * 1e9);
      const bool named = std::find(want.begin(), want.end(), sid) != want.end();
      if (expected_s > budget_s && !named) {
        rec.status = "skipped";
        rec.reason = fmt::format(
            "expected {:.0f} s at {:.1f} GFLOP/s exceeds the per-trial budget of {:.0f} s "
            "(--budget, or name the solver in --solvers)",
            expected_s, solver_gflops, budget_s);
      } else {
        // Deadline of the first run: a floor for start-up and planning plus a multiple of the
        // expected run time, capped. The rest (verification, timing) gets its deadline from the
        // measured first run. --timeout overrides both.
        const double ref_s =
            p.flops() / 2 <= TrialOptions{}.full_reference_limit ? p.flops() / 1e9 : 0.1;
        const double deadline_ms =
            timeout_s > 0 ? timeout_s * 1000 : std::min(300000.0, 3000 + 20 * expected_s * 1000);
        const auto rest_ms = [&](double first_ms) {
          if (timeout_s > 0) return timeout_s * 1000;
          return std::min(300000.0,
                          2000 + 3 * ref_s * 1000 + 2 * 1000 /* timing budget */ + 3 * first_ms);
        };
        rec.deadline_ms = deadline_ms;
        if (auto st = (*store)->begin(rec); !st) return fail(st.message());
        probe::TrialRequest req;
        req.problem = key;
        req.solver = sid;
        req.seed = static_cast<std::uint64_t>(*seed);
        const probe::Outcome out = worker.run(req, deadline_ms, rest_ms);
        rec.deadline_ms = out.deadline_ms;
        sandbox_s += out.elapsed_ms / 1000;
        rec.status = out.status;
        rec.reason = out.reason;
        rec.signal = out.signal;
        rec.exit_code = out.exit_code;
        rec.stderr_tail = out.stderr_tail;
        if (out.reply) {
          rec.first_ms = out.reply->first_ms;
          rec.median_ms = out.reply->median_ms;
          rec.min_ms = out.reply->min_ms;
          rec.runs = out.reply->runs;
          rec.workspace_bytes = static_cast<std::int64_t>(out.reply->workspace_bytes);
          rec.peak_rss_bytes = static_cast<std::int64_t>(out.reply->peak_rss_bytes);
          rec.rel_error = out.reply->rel_error;
          rec.max_abs_error = out.reply->max_abs_error;
          rec.tolerance = out.reply->tolerance;
        }
        if (out.status == "hang") hang_cost += out.elapsed_ms / 1000;
        note = out.status == "ok" ? fmt::format("{:.3f} ms", rec.median_ms) : out.reason;
      }
      if (auto st = (*store)->finish(rec); !st) return fail(st.message());
      ++counts[rec.status];
      if (json) {
        std::printf("%s\n", nlohmann::json{{"problem", key},
                                           {"solver", sid},
                                           {"status", rec.status},
                                           {"reason", rec.reason},
                                           {"median_ms", rec.median_ms},
                                           {"signal", rec.signal},
                                           {"exit_code", rec.exit_code},
                                           {"command", rec.command}}
                                .dump()
                                .c_str());
      } else if (csv) {
        std::printf(
            "%s,%s,%s,%.6f,%.6f,%.6f,%d,%lld,%.3e,%.3e,%d,%d,%s,%s\n", csv_field(key).c_str(),
            sid.c_str(), rec.status.c_str(), rec.first_ms, rec.median_ms, rec.min_ms, rec.runs,
            static_cast<long long>(rec.workspace_bytes), rec.rel_error, rec.tolerance, rec.signal,
            rec.exit_code, csv_field(rec.reason).c_str(), csv_field(rec.command).c_str());
      } else {
        const std::string label = p.name.empty() ? key : p.name;
        const std::string text = (note.empty() ? rec.reason : note);
        ++seen[rec.status];
        if (tty) {
          // One progress line, rewritten; anything that is not ok also gets a line of its own.
          if (rec.status != "ok" && rec.status != "unsupported") {
            std::printf("\r\033[K%-26s %-11s %s  %s\n", sid.c_str(), rec.status.c_str(),
                        label.c_str(), text.c_str());
          }
          std::string tally;
          for (const auto& [k, v] : seen) tally += fmt::format(" {} {}", v, k);
          std::printf("\r\033[K[%zu/%zu] %.0fs %s %s |%s", index, total, now_s() - t0,
                      label.c_str(), sid.c_str(), tally.c_str());
        } else {
          std::printf("[%zu/%zu] %-26s %-11s %s  %s\n", index, total, sid.c_str(),
                      rec.status.c_str(), label.c_str(), text.c_str());
        }
      }
      std::fflush(stdout);
    }
  }
  if (tty) std::printf("\n");
  // Results per problem from the database (this run's and reused evidence alike): the fastest
  // verified solver and how many solvers ended in each status.
  if (!json && !csv) {
    std::printf("\n%-40s %-26s %10s  %s\n", "problem", "fastest verified solver", "median ms",
                "statuses");
    for (const Problem& p : problems) {
      const std::string key = identity_string(p);
      std::string best;
      double best_ms = 0;
      std::map<std::string, int> per;
      for (const std::string& sid : solvers) {
        auto r = (*store)->find(dev.fingerprint, key, sid);
        if (!r) continue;
        ++per[r->status];
        if (r->status == "ok" && (best.empty() || r->median_ms < best_ms)) {
          best = sid;
          best_ms = r->median_ms;
        }
      }
      std::string marks;
      for (const auto& [k, v] : per) marks += fmt::format("{} {}  ", v, k);
      const std::string name = p.name.empty()
                                   ? key
                                   : p.name + (p.direction == Direction::forward
                                                   ? ""
                                                   : " " + std::string(to_string(p.direction)));
      std::printf("%-40.40s %-26s %10s  %s\n", name.c_str(),
                  best.empty() ? "NONE VERIFIED" : best.c_str(),
                  best.empty() ? "-" : fmt::format("{:.3f}", best_ms).c_str(), marks.c_str());
    }
  }
  const double wall = now_s() - t0;
  std::string summary;
  for (const auto& [k, v] : counts) summary += fmt::format("{} {}, ", v, k);
  if (!summary.empty()) summary.resize(summary.size() - 2);
  std::fprintf(
      info,
      "probe finished in %.1f s (%.1f s in workers; hangs cost %.1f s; %d worker start(s)): %s\n",
      wall, sandbox_s, hang_cost, worker.starts(),
      summary.empty() ? "nothing to do" : summary.c_str());
  return 0;
}

}  // namespace convguard::cli
