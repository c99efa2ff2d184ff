#include "probe/sweep.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "convguard/canonical.hpp"
#include "convguard/trial.hpp"
#include "probe/pool.hpp"
#include "probe/reproduce.hpp"

namespace convguard::probe {
namespace {

// Host time per output element of a full comparison with the device reference (conversion to
// fp64 and the comparison; ~30M elements/s on the build machine).
constexpr double kCompareSPerElement = 3e-8;
// A hang under a derived deadline is tried once more under this many times the deadline.
constexpr double kHangConfirmFactor = 4;

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void take_reply(const Outcome& out, db::TrialRecord& rec) {
  rec.deadline_ms = out.deadline_ms;
  rec.status = out.status;
  rec.reason = out.reason;
  rec.signal = out.signal;
  rec.exit_code = out.exit_code;
  rec.stderr_tail = out.stderr_tail;
  rec.compile_ms = out.compile_ms;
  rec.compile_deadline_ms = out.compile_deadline_ms;
  if (!out.reply) return;
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

// A trial whose result could not be written (a full disk, an I/O error) must not stay `running`:
// the next probe would take it for a prober that died during it, and a second such failure would
// count against the solver. It is written `interrupted` (not evidence: rerun) in a smaller row,
// which can still fit where the result did not; when even that fails, the message says what the
// next probe will do with it. Either way the sweep stops with an error naming the trial.
Status unrecorded(db::Store& store, const db::TrialRecord& rec, const Status& why) {
  db::TrialRecord cut;
  cut.device = rec.device;
  cut.problem = rec.problem;
  cut.solver = rec.solver;
  cut.command = rec.command;
  cut.status = "interrupted";
  cut.reason = "its result (" + rec.status +
               ") could not be recorded, the database write failed: not evidence, run again";
  store.release_reserve();
  const bool marked = store.finish(cut).is_ok();
  return {why.code(),
          fmt::format("{} on {}: its result ({}) could not be recorded: {}; the trial is {}",
                      rec.solver, rec.problem, rec.status, why.message(),
                      marked ? "recorded interrupted instead and runs again next time"
                             : "left running: the next probe records it interrupted and runs it "
                               "again")};
}

// State shared by the job threads; everything in it is touched under `mu`.
struct Shared {
  Shared(const SweepConfig& c_, db::Store& store_, const SweepCallbacks& cb_)
      : c(c_), store(store_), cb(cb_) {}
  const SweepConfig& c;
  db::Store& store;
  const SweepCallbacks& cb;
  SweepDevice dev;
  std::mutex mu;
  std::size_t next = 0;
  std::vector<std::pair<std::size_t, std::string>> trials;  // (problem index, solver id)
  std::vector<bool> solved;                                 // per problem, for stop_at_first_ok
  SweepSummary sum;
  Status failure;
  double t0 = 0;
  double gflops = 0, ref_gflops = 0, sample_gflops = 0;
  std::map<std::string, double> slowest_ok_ms;  // per problem: the slowest ok first run so far
};

void emit(Shared& s, SweepEvent::Kind kind, std::size_t index, const Problem& p,
          db::TrialRecord rec) {
  ++s.sum.counts[kind == SweepEvent::Kind::reused      ? "reused"
                 : kind == SweepEvent::Kind::known_bad ? "known bad"
                                                       : rec.status];
  if (!s.cb.trial) return;
  SweepEvent e;
  e.kind = kind;
  e.index = index;
  e.total = s.trials.size();
  e.problem = &p;
  e.record = std::move(rec);
  e.elapsed_s = now_s() - s.t0;
  s.cb.trial(e);
}

// One job: takes the next trial, decides under the lock whether it runs, runs it in this job's
// worker without the lock, records it under the lock.
void job(Shared& s, Worker& worker) {
  const SweepConfig& c = s.c;
  for (;;) {
    std::unique_lock lock(s.mu);
    if (s.next >= s.trials.size() || !s.failure.is_ok()) return;
    if (stop_requested()) {
      s.sum.interrupted = true;
      return;
    }
    const std::size_t index = ++s.next;
    const std::size_t pi = s.trials[index - 1].first;
    const Problem& p = c.problems[pi];
    const std::string& sid = s.trials[index - 1].second;
    const std::string key = identity_string(p);
    if (c.stop_at_first_ok && s.solved[pi]) {
      ++s.sum.counts["not needed"];
      continue;
    }
    if (auto prev = s.store.find(s.dev.fingerprint, key, sid)) {
      if ((prev->status == "ok" || prev->status == "unsupported") && !c.force) {
        if (prev->status == "ok") s.solved[pi] = true;
        emit(s, SweepEvent::Kind::reused, index, p, *prev);
        continue;
      }
      if (db::is_bad_status(prev->status) && !c.retry_bad) {
        emit(s, SweepEvent::Kind::known_bad, index, p, *prev);
        continue;
      }
    }
    db::TrialRecord rec;
    rec.device = s.dev.fingerprint;
    rec.problem = key;
    rec.solver = sid;
    rec.command = c.command_prefix + reproduce_command(key, sid, c.device);
    // Throughputs: the best any worker of this sweep measured (one measured while the machine
    // was busy must not make every deadline and budget 100x too tight).
    s.gflops = std::max(s.gflops, worker.gflops());
    s.ref_gflops = std::max(s.ref_gflops, worker.ref_gflops());
    s.sample_gflops = std::max(s.sample_gflops, worker.sample_gflops());
    const double gflops = sid == "cpu:ref" ? s.ref_gflops : s.gflops;
    const double expected_s = p.flops() / (std::max(gflops, 0.01) * 1e9);
    const bool named = std::find(c.named.begin(), c.named.end(), sid) != c.named.end();
    std::string skip;
    if (sid == "cpu:ref" && !named) {
      skip =
          "cpu:ref is the fp64 reference verification uses: checking it against itself proves "
          "nothing (name it in --solvers to time it)";
    } else if (expected_s > c.budget_s && !named) {
      // Slow but correct is not a hang: skip what would blow the per-trial budget.
      skip = fmt::format(
          "expected {:.0f} s at {:.2f} GFLOP/s exceeds the per-trial budget of {:.0f} s "
          "(--budget, or name the solver in --solvers)",
          expected_s, gflops, c.budget_s);
    }
    if (!skip.empty()) {
      rec.status = "skipped";
      rec.reason = skip;
      if (auto st = s.store.finish(rec); !st) {
        s.failure = st;
        return;
      }
      emit(s, SweepEvent::Kind::skipped, index, p, rec);
      continue;
    }
    // Verification: the full fp64 reference, or TrialOptions' sampled points, plus on a GPU the
    // element-by-element comparison with the device reference's output on the host; a worker's
    // first trial of a problem also computes that output before the first run (measured on the
    // H100 machine: a 268M-element dx took seconds, enough to overrun deadlines without this).
    const TrialOptions verification;
    const bool sampled = p.flops() / 2 > verification.full_reference_limit;
    const double compare_s =
        sampled && c.device != "cpu"
            ? static_cast<double>(output_desc(p).elements()) * kCompareSPerElement
            : 0.0;
    const double reference_s =
        compare_s +
        (sampled
             ? 4.0 * static_cast<double>(sampled_points(p, verification) * p.reduction_length()) /
                   (std::max(s.sample_gflops, 0.01) * 1e9)
             : 3.0 * p.flops() / (std::max(s.ref_gflops, 0.01) * 1e9));  // ref, |ref|, TF32
    // Other solvers' times on this problem bound what a slow-but-working one may take.
    const double slowest_ok_ms = s.slowest_ok_ms[key];
    const double deadline_ms =
        c.timeout_s > 0 ? c.timeout_s * 1000
                        : first_run_deadline_ms(expected_s, slowest_ok_ms) + 3000 * compare_s;
    rec.deadline_ms = deadline_ms;
    if (auto st = s.store.begin(rec); !st) {
      s.failure = {st.code(), fmt::format("{} on {}: not started, its row could not be written: {}",
                                          sid, key, st.message())};
      return;
    }
    lock.unlock();

    TrialRequest req;
    req.problem = key;
    req.solver = sid;
    req.seed = c.seed;
    // A budget of 0: any first run already spent it, so the first run is the measurement.
    req.max_time_ms = std::max(c.timing_ms, 1e-6);
    // A user's --timeout bounds the solver's runs; verification against the fp64 reference is
    // convguard's own work and gets at least its derived time (a 2 s --timeout once recorded a
    // healthy solver hang while a loaded machine verified a 128->256 channel layer).
    const auto rest_ms = [&](double first_ms) {
      const double derived = rest_deadline_ms(reference_s, c.timing_ms, first_ms);
      return c.timeout_s > 0 ? std::max(c.timeout_s * 1000, derived) : derived;
    };
    Outcome out = worker.run(req, deadline_ms, rest_ms);
    if (out.status == "hang" && c.timeout_s <= 0) {
      // A derived deadline is an estimate, and a loaded machine (a build beside the probe) once
      // made healthy solvers miss it by seconds, recording them hang: known bad for good. A real
      // hang never answers, so a hang is confirmed by a second try, in a fresh worker, under
      // kHangConfirmFactor times the deadline, before it counts against the solver. A user's
      // --timeout is taken as given.
      const double first_ms = out.elapsed_ms;
      const auto longer_rest = [&](double f) { return kHangConfirmFactor * rest_ms(f); };
      out = worker.run(req, kHangConfirmFactor * deadline_ms, longer_rest);
      if (out.status == "hang") {
        out.reason += fmt::format(
            " (confirmed: the first try also gave no answer, after {:.0f} ms)", first_ms);
      } else {
        const std::string note = fmt::format(
            "answered on a second try under {:.0f}x the deadline; the first try gave no answer "
            "within {:.0f} ms (a loaded machine?)",
            kHangConfirmFactor, first_ms);
        out.reason = out.reason.empty() ? note : out.reason + " (" + note + ")";
      }
      lock.lock();
      s.sum.hang_cost_s += first_ms / 1000;
      s.sum.sandbox_s += first_ms / 1000;
      lock.unlock();
    }
    take_reply(out, rec);

    lock.lock();
    s.sum.sandbox_s += out.elapsed_ms / 1000;
    if (out.status == "hang") s.sum.hang_cost_s += out.elapsed_ms / 1000;
    if (out.status == "ok") {
      s.slowest_ok_ms[key] = std::max(slowest_ok_ms, rec.first_ms);
      s.solved[pi] = true;
    }
    if (auto st = s.store.finish(rec); !st) {
      s.failure = unrecorded(s.store, rec, st);
      return;
    }
    emit(s, SweepEvent::Kind::ran, index, p, rec);
  }
}

}  // namespace

double first_run_deadline_ms(double expected_s, double slowest_ok_ms) {
  return std::min(300000.0, 3000 + std::max(50 * expected_s * 1000, 10 * slowest_ok_ms));
}

double rest_deadline_ms(double reference_s, double timing_ms, double first_ms) {
  return std::min(300000.0, 2000 + 3 * reference_s * 1000 + 2 * timing_ms + 3 * first_ms);
}

Result<SweepSummary> run_sweep(const SweepConfig& c, db::Store& store, const SweepCallbacks& cb) {
  if (c.jobs < 1) return invalid_argument("jobs: must be at least 1");
  if (c.jobs > 1 && c.device != "cpu")
    return invalid_argument("jobs: more than one worker per device is for the CPU only");
  if (!c.solvers_per_problem.empty() && c.solvers_per_problem.size() != c.problems.size())
    return invalid_argument("solvers_per_problem: one list per problem");
  Shared s(c, store, cb);
  for (std::size_t i = 0; i < c.problems.size(); ++i)
    for (const std::string& id :
         c.solvers_per_problem.empty() ? c.solvers : c.solvers_per_problem[i])
      s.trials.emplace_back(i, id);
  s.solved.assign(c.problems.size(), false);
  s.t0 = now_s();
  std::vector<std::string> env = c.worker_env;
  if (!c.inherit_miopen_env) env.emplace_back("MIOPEN_*");  // pool.hpp: withheld from workers
  if (c.jobs > 1 || c.threads > 0) {
    const int all = c.threads > 0 ? c.threads : omp_get_num_procs();
    env.push_back("OMP_NUM_THREADS=" + std::to_string(std::max(1, all / c.jobs)));
  }
  std::vector<std::unique_ptr<Worker>> workers;
  for (int j = 0; j < c.jobs; ++j) {
    workers.push_back(std::make_unique<Worker>(
        std::vector<std::string>{c.worker_exe, "worker", "--device", c.device}, env));
    workers.back()->set_compile_deadline_ms(c.compile_timeout_s * 1000);
  }
  // The first worker says which device this is; the others must agree.
  for (auto& w : workers) {
    if (auto st = w->ensure_started(); !st) {
      return Status{st.code(), "worker start-up failed: " + st.message()};
    }
  }
  s.dev = {workers[0]->fingerprint(), workers[0]->description(), workers[0]->gflops(),
           workers[0]->ref_gflops(), workers[0]->sample_gflops()};
  if (s.dev.fingerprint.empty()) {
    return Status{StatusCode::internal_error, "worker start-up: no device fingerprint"};
  }
  if (auto st = store.add_device(s.dev.fingerprint, s.dev.description); !st) return st;
  if (cb.started) cb.started(s.dev, s.trials.size());
  if (c.jobs == 1) {
    job(s, *workers[0]);
  } else {
    std::vector<std::thread> threads;
    for (auto& w : workers) threads.emplace_back([&s, &w] { job(s, *w); });
    for (auto& t : threads) t.join();
  }
  if (!s.failure.is_ok()) return s.failure;
  for (auto& w : workers) s.sum.worker_starts += w->starts();
  s.sum.wall_s = now_s() - s.t0;
  return s.sum;
}

}  // namespace convguard::probe
