#include "probe/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "plugins/loader.hpp"
#include "probe/pool.hpp"
#include "probe/reproduce.hpp"

namespace convguard::probe {
namespace {

// Host time per output element of a full comparison with the device reference (conversion to
// fp64 and the comparison; ~30M elements/s on the build machine).
constexpr double kCompareSPerElement = 3e-8;
// A hang under a derived deadline is tried once more under this many times the deadline.
constexpr double kHangConfirmFactor = 4;
// A slow-factor stop's reason begins so; its first_ms is how long the first run had gone.
constexpr const char* kSlowStopPrefix = "too slow to be chosen: ";
bool is_slow_stop(const db::TrialRecord& r) {
  return r.status == "skipped" && r.first_ms > 0 && r.reason.starts_with(kSlowStopPrefix);
}
// --slow-factor never stops a first run sooner than this (plus twice the reference's time):
// the fresh worker that follows costs 0.1 s to start and fills the problem's tensors again.
constexpr double kSlowStopFloorMs = 1000;

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

// The workers that share one fingerprint and the trial list they take from. Held by pointer:
// a job keeps its group while others are added.
struct Group {
  SweepDevice dev;
  std::vector<bool> taken;  // per trial: a job of this group has taken it
  std::size_t taken_count = 0, first_free = 0;
  std::vector<int> trying;   // per problem: its trials running now
  std::vector<bool> solved;  // per problem, for stop_at_first_ok
  std::vector<int> owners;   // per problem: the jobs whose current problem it is (take())
  double gflops = 0, ref_gflops = 0, sample_gflops = 0;
  std::map<std::string, double> slowest_ok_ms;  // per problem: the slowest ok first run so far
  // Per problem: the fastest ok first run known (this sweep's or reused), and whose it is.
  std::map<std::string, std::pair<double, std::string>> fastest_ok;
};

// Notes an ok first run of `sid` on the problem `key`: the fastest bounds --slow-factor's stop.
void note_fastest(Group& g, const std::string& key, const std::string& sid, double first_ms) {
  if (!(first_ms > 0)) return;
  auto [it, fresh] = g.fastest_ok.try_emplace(key, first_ms, sid);
  if (!fresh && first_ms < it->second.first) it->second = {first_ms, sid};
}

// State shared by the job threads; everything in it is touched under `mu`.
// Lets the retry of a trial its prober died during run with no other trial of this prober in
// flight: its jobs pass shared, a retry alone. A waiting retry holds back new shared passes, so
// the trials already running finish and no new one starts until it is done. Then a second death
// during the retry is its own (the store's recovery counts it only if it was the one running row).
class AloneGate {
 public:
  class Pass {
   public:
    Pass(AloneGate& g, bool alone) : g_(g), alone_(alone) { g_.enter(alone_); }
    ~Pass() { g_.leave(alone_); }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    AloneGate& g_;
    bool alone_;
  };

 private:
  void enter(bool alone) {
    std::unique_lock l(m_);
    if (alone) {
      ++waiting_alone_;
      cv_.wait(l, [&] { return !alone_ && shared_ == 0; });
      --waiting_alone_;
      alone_ = true;
    } else {
      cv_.wait(l, [&] { return !alone_ && waiting_alone_ == 0; });
      ++shared_;
    }
  }
  void leave(bool alone) {
    std::lock_guard l(m_);
    if (alone)
      alone_ = false;
    else
      --shared_;
    cv_.notify_all();
  }
  std::mutex m_;
  std::condition_variable cv_;
  int shared_ = 0, waiting_alone_ = 0;
  bool alone_ = false;
};

struct Shared {
  Shared(const SweepConfig& c_, db::Store& store_, const SweepCallbacks& cb_)
      : c(c_), store(store_), cb(cb_) {}
  const SweepConfig& c;
  db::Store& store;
  const SweepCallbacks& cb;
  std::mutex mu;
  std::condition_variable trial_done;  // a run ended: a problem may be free to try again
  std::vector<std::unique_ptr<Group>> groups;
  std::vector<std::pair<std::size_t, std::string>> trials;  // (problem index, solver id)
  std::vector<std::size_t> first_trial;  // per problem (and one past the last): its trials' start
  SweepSummary sum;
  Status failure;
  Status first_start_failure;  // why the first worker that could not start did not
  double t0 = 0;
  AloneGate gate;  // taken without `mu` held, held from a trial's claim to its record
};

// The group of a worker that has just started: the one with its fingerprint, else a new one.
// Null (and the sweep failed) when the database refuses the device.
Group* join(Shared& s, const Worker& w, const std::string& device) {
  for (auto& g : s.groups) {
    if (g->dev.fingerprint != w.fingerprint()) continue;
    // --jobs N starts N workers of one device: it is named once.
    if (std::find(g->dev.names.begin(), g->dev.names.end(), device) == g->dev.names.end())
      g->dev.names.push_back(device);
    return g.get();
  }
  auto g = std::make_unique<Group>();
  g->dev = {w.fingerprint(), w.description(),   w.gflops(),
            w.ref_gflops(),  w.sample_gflops(), {device}};
  g->taken.assign(s.trials.size(), false);
  g->trying.assign(s.c.problems.size(), 0);
  g->solved.assign(s.c.problems.size(), false);
  g->owners.assign(s.c.problems.size(), 0);
  // Stored without the name of the device that joined first ("cuda:1: NVIDIA H200 ..."): identical
  // devices share the fingerprint, so its description is the model's; each row's reproduce
  // command names the device that ran it.
  std::string_view described = g->dev.description;
  if (described.starts_with(device + ": ")) described.remove_prefix(device.size() + 2);
  if (auto st = s.store.add_device(g->dev.fingerprint, std::string(described)); !st) {
    s.failure = st;
    return nullptr;
  }
  if (s.cb.started) s.cb.started(g->dev, s.trials.size());
  s.groups.push_back(std::move(g));
  return s.groups.back().get();
}

void emit(Shared& s, SweepEvent::Kind kind, std::size_t index, const Problem& p,
          const std::string& device, db::TrialRecord rec, double trial_s = 0) {
  ++s.sum.counts[kind == SweepEvent::Kind::reused      ? "reused"
                 : kind == SweepEvent::Kind::known_bad ? "known bad"
                                                       : rec.status];
  if (!s.cb.trial) return;
  SweepEvent e;
  e.kind = kind;
  e.index = index;
  e.total = s.trials.size();
  e.problem = &p;
  e.device = device;
  e.record = std::move(rec);
  e.elapsed_s = now_s() - s.t0;
  e.trial_s = trial_s;
  s.cb.trial(e);
}

// Starts a job's worker (again, after a hang or a crash took it) and puts it in its group, or
// says why not. With one device a restart stays Worker::run's (a trial whose worker cannot start
// is `error`, as it always was); with several, the device is left out and the others take its
// share.
bool ready(Shared& s, Worker& worker, const std::string& device, Group*& g) {
  if (g && (worker.alive() || s.c.devices.size() < 2)) return true;
  Status st = worker.ensure_started();
  std::lock_guard lock(s.mu);
  if (st && worker.fingerprint().empty()) {
    st = {StatusCode::internal_error, "worker start-up: no device fingerprint"};
  }  // A restart that reports another device is refused by the Worker itself.
  if (st && !g) {
    g = join(s, worker, device);
    return g != nullptr;
  }
  if (st) return true;
  if (s.first_start_failure.is_ok()) s.first_start_failure = st;
  s.sum.lost.push_back(device + ": worker start-up failed: " + st.message());
  return false;
}

// The next trial for a job of group g: the first not taken; with stop_at_first_ok, the first of a
// problem that no other job is trying, so a problem's solvers are tried one at a time and the
// first that verifies ends it as with one worker (several devices record what one would).
// With several jobs, a job stays on its problem (`mine`) while it has trials left, then takes the
// first problem no other job is on, and only when every problem left is another's helps with the
// first: each problem's inputs and fp64 reference are made in one worker, not in every one (jobs
// taking trials in turn made them in each; two H200s gained 1.3x on the small problems, not 2x).
// With one job this is the list's order. Nullopt when every trial left is of a problem being tried.
std::optional<std::size_t> take(const Shared& s, Group& g, std::optional<std::size_t>& mine) {
  auto free_at = [&](std::size_t k) {
    return !g.taken[k] && !(s.c.stop_at_first_ok && g.trying[s.trials[k].first] > 0);
  };
  auto claim = [&](std::size_t k) {
    g.taken[k] = true;
    ++g.taken_count;
    while (g.first_free < s.trials.size() && g.taken[g.first_free]) ++g.first_free;
    const std::size_t pi = s.trials[k].first;
    if (mine != pi) {
      if (mine) --g.owners[*mine];
      ++g.owners[pi];
      mine = pi;
    }
    return k;
  };
  if (mine) {
    for (std::size_t k = std::max(g.first_free, s.first_trial[*mine]); k < s.first_trial[*mine + 1];
         ++k)
      if (free_at(k)) return claim(k);
  }
  std::optional<std::size_t> shared;
  for (std::size_t k = g.first_free; k < s.trials.size(); ++k) {
    if (!free_at(k)) continue;
    if (g.owners[s.trials[k].first] == 0) return claim(k);
    if (!shared) shared = k;
  }
  if (shared) return claim(*shared);
  return std::nullopt;
}

// One job: takes the next trial of its group, decides under the lock whether it runs, runs it in
// this job's worker without the lock, records it under the lock.
void job(Shared& s, Worker& worker, const std::string& device, Group* g) {
  const SweepConfig& c = s.c;
  std::optional<std::size_t> mine;  // the problem this job is on (take())
  for (;;) {
    if (!ready(s, worker, device, g)) return;
    std::unique_lock lock(s.mu);
    std::optional<std::size_t> k;
    for (;;) {
      if (g->taken_count >= s.trials.size() || !s.failure.is_ok()) return;
      if (stop_requested()) {
        s.sum.interrupted = true;
        return;
      }
      if ((k = take(s, *g, mine))) break;
      // Every trial left is of a problem another job is trying: wait for its end (or a stop).
      s.trial_done.wait_for(lock, std::chrono::milliseconds(100));
    }
    const std::size_t index = *k + 1;
    const std::size_t pi = s.trials[index - 1].first;
    const Problem& p = c.problems[pi];
    const std::string& sid = s.trials[index - 1].second;
    const std::string key = identity_string(p);
    if (c.stop_at_first_ok && g->solved[pi]) {
      ++s.sum.counts["not needed"];
      continue;
    }
    // What this prober saw decides the trial; begin() claims it only if nobody changed it since.
    const auto prev = s.store.find(g->dev.fingerprint, key, sid);
    if (auto st = s.store.read_failure(); !st) {
      // Not "no evidence": a trial recorded as hanging would be run again.
      s.failure = {st.code(), fmt::format("{} on {}: its evidence could not be read: {}", sid, key,
                                          st.message())};
      return;
    }
    if (prev) {
      if ((prev->status == "ok" || prev->status == "unsupported") && !c.force) {
        if (prev->status == "ok") {
          g->solved[pi] = true;
          note_fastest(*g, key, sid, prev->first_ms);
        }
        emit(s, SweepEvent::Kind::reused, index, p, device, *prev);
        continue;
      }
      if (db::is_bad_status(prev->status) && !c.retry_bad) {
        emit(s, SweepEvent::Kind::known_bad, index, p, device, *prev);
        continue;
      }
    }
    db::TrialRecord rec;
    rec.device = g->dev.fingerprint;
    rec.problem = key;
    rec.solver = sid;
    rec.command = c.command_prefix + reproduce_command(key, sid, device);
    // Throughputs: the best any worker of this sweep measured (one measured while the machine
    // was busy must not make every deadline and budget 100x too tight).
    g->gflops = std::max(g->gflops, worker.gflops());
    g->ref_gflops = std::max(g->ref_gflops, worker.ref_gflops());
    g->sample_gflops = std::max(g->sample_gflops, worker.sample_gflops());
    const double gflops = sid == "cpu:ref" ? g->ref_gflops : g->gflops;
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
      emit(s, SweepEvent::Kind::skipped, index, p, device, rec);
      continue;
    }
    // Verification: the full fp64 reference, or TrialOptions' sampled points, plus on a GPU the
    // element-by-element comparison with the device reference's output on the host; a worker's
    // first trial of a problem also computes that output before the first run (measured on the
    // H100 machine: a 268M-element dx took seconds, enough to overrun deadlines without this).
    const TrialOptions verification;
    const bool sampled = p.flops() / 2 > verification.full_reference_limit;
    const double compare_s =
        sampled && device != "cpu"
            ? static_cast<double>(output_desc(p).elements()) * kCompareSPerElement
            : 0.0;
    const double reference_s =
        compare_s +
        (sampled
             ? 4.0 * static_cast<double>(sampled_points(p, verification) * p.reduction_length()) /
                   (std::max(g->sample_gflops, 0.01) * 1e9)
             : 3.0 * p.flops() / (std::max(g->ref_gflops, 0.01) * 1e9));  // ref, |ref|, TF32
    // Other solvers' times on this problem bound what a slow-but-working one may take.
    const double slowest_ok_ms = g->slowest_ok_ms[key];
    const double deadline_ms =
        c.timeout_s > 0 ? c.timeout_s * 1000
                        : first_run_deadline_ms(expected_s, slowest_ok_ms) + 3000 * compare_s;
    rec.deadline_ms = deadline_ms;
    // A first run this much slower than one already verified would never be chosen: stopped
    // there, recorded skipped (not evidence), unless the user named the solver. Never where the
    // evidence is bad (--retry-bad): a stop would replace a hang or a crash with `skipped`.
    double stop_slow_ms = 0, fastest_ms = 0, floor_ms = 0;
    std::string fastest_sid;
    if (const auto f = g->fastest_ok.find(key);
        c.slow_factor > 0 && !named && f != g->fastest_ok.end() &&
        !(prev && db::is_bad_status(prev->status)) &&
        std::find(c.slow_stoppable.begin(), c.slow_stoppable.end(), sid) !=
            c.slow_stoppable.end()) {
      // Stopping costs a fresh worker, which computes this problem's test data and reference
      // again for the next solver: not worth it below that.
      std::tie(fastest_ms, fastest_sid) = f->second;
      floor_ms = kSlowStopFloorMs + 2000 * reference_s;
      stop_slow_ms = std::max(c.slow_factor * fastest_ms, floor_ms);
      if (stop_slow_ms >= deadline_ms) stop_slow_ms = 0;  // the deadline comes first
      // Stopped before after running longer than this limit: it would be again (its row's
      // first_ms is how long it had run). Reused, so a rerun does not pay for it every time.
      if (stop_slow_ms > 0 && prev && is_slow_stop(*prev) && prev->first_ms >= stop_slow_ms &&
          !c.force) {
        emit(s, SweepEvent::Kind::reused, index, p, device, *prev);
        continue;
      }
    }
    // The row is claimed only with the gate passed (without `mu`: a retry waits for the trials
    // in flight, which take `mu` to record themselves), so a retry's row is never running beside
    // another trial's of this prober.
    lock.unlock();
    const AloneGate::Pass pass(s.gate, db::retries_a_death(prev));
    lock.lock();
    if (!s.failure.is_ok()) return;
    auto claim = s.store.begin(rec, prev);
    if (!claim) {
      const Status& st = claim.status();
      s.failure = {st.code(), fmt::format("{} on {}: not started, its row could not be written: {}",
                                          sid, key, st.message())};
      return;
    }
    if (*claim == db::Claim::held_elsewhere) {
      // Another live prober of a shared store runs it now: its result will be the row.
      ++s.sum.counts["held by another prober"];
      continue;
    }
    ++g->trying[pi];
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
    const double trial_start_s = now_s();
    Outcome out = worker.run(req, deadline_ms, rest_ms, stop_slow_ms);
    if (out.status == "skipped") {
      out.reason = fmt::format(
          "{}{} (the limit: {} ms, the larger of {:g}x the fastest verified first run on this "
          "problem ({}, {:.3f} ms) and {:.0f} ms (1 s and twice the reference's expected time)); "
          "not verified, not evidence against it (--slow-factor 0, or naming it in --solvers, "
          "runs it to the end)",
          kSlowStopPrefix, out.reason, static_cast<long>(stop_slow_ms), c.slow_factor, fastest_sid,
          fastest_ms, floor_ms);
    }
    if (out.status == "hang" && c.timeout_s <= 0) {
      // A derived deadline is an estimate, and a loaded machine (a build beside the probe) once
      // made healthy solvers miss it by seconds, recording them hang: known bad for good. A real
      // hang never answers, so a hang is confirmed by a second try, in a fresh worker, under
      // kHangConfirmFactor times the deadline, before it counts against the solver. A user's
      // --timeout is taken as given.
      const Outcome first = out;
      const auto longer_rest = [&](double f) { return kHangConfirmFactor * rest_ms(f); };
      out = worker.run(req, kHangConfirmFactor * deadline_ms, longer_rest);
      if (out.not_started && out.start_exited) {
        // No second try could start because its worker could not open the device again (a GPU
        // that needs a reset after the first try): that says nothing of the solver's second
        // chance, and the first try's silence is all there is, recorded as the hang it was,
        // saying so. Retrying it would take the device down on every probe.
        const std::string why = out.reason;
        out = first;
        out.reason += " (not confirmed: a second try could not start: " + why + ")";
      } else if (out.not_started) {
        // The second try's worker was only slow to start (a loaded machine, the very case the
        // confirmation exists for): no evidence either way. Recorded `error`, which the next
        // probe retries, not `hang`, which would be known bad for good.
        const std::string why = out.reason;
        out = first;
        out.status = "error";
        out.reason =
            "no answer within the deadline, and the confirming second try could not "
            "start (" +
            why + "): not counted as a hang; the next probe tries again";
      } else {
        const double first_ms = first.elapsed_ms;
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
    }
    take_reply(out, rec);
    if (out.status == "skipped") rec.first_ms = out.slow_ms;  // a lower bound (is_slow_stop)
    const double trial_s = now_s() - trial_start_s;

    lock.lock();
    --g->trying[pi];
    s.trial_done.notify_all();
    s.sum.sandbox_s += out.elapsed_ms / 1000;
    if (out.status == "hang") s.sum.hang_cost_s += out.elapsed_ms / 1000;
    if (out.status == "ok") {
      g->slowest_ok_ms[key] = std::max(slowest_ok_ms, rec.first_ms);
      note_fastest(*g, key, sid, rec.first_ms);
      g->solved[pi] = true;
    }
    if (auto st = s.store.finish(rec); !st) {
      s.failure = unrecorded(s.store, rec, st);
      return;
    }
    emit(s, SweepEvent::Kind::ran, index, p, device, rec, trial_s);
  }
}

}  // namespace

void set_slow_factor(SweepConfig& c, std::optional<double> given) {
  c.slow_factor = given.value_or(kCpuSlowFactor);
  if (given) {
    c.slow_stoppable = c.solvers;
    return;
  }
  c.slow_stoppable.clear();
  const auto vendor = plugins::plugin_solvers();
  for (const std::string& id : c.solvers) {
    const Solver* s = find_solver(id);
    if (s && s->device() == Device::cpu &&
        std::find(vendor.begin(), vendor.end(), s) == vendor.end())
      c.slow_stoppable.push_back(id);
  }
}

double first_run_deadline_ms(double expected_s, double slowest_ok_ms) {
  return std::min(300000.0, 3000 + std::max(50 * expected_s * 1000, 10 * slowest_ok_ms));
}

double rest_deadline_ms(double reference_s, double timing_ms, double first_ms) {
  return std::min(300000.0, 2000 + 3 * reference_s * 1000 + 2 * timing_ms + 3 * first_ms);
}

Result<SweepSummary> run_sweep(const SweepConfig& c, db::Store& store, const SweepCallbacks& cb) {
  if (c.jobs < 1) return invalid_argument("jobs: must be at least 1");
  if (c.jobs > 1 && (c.device != "cpu" || !c.devices.empty()))
    return invalid_argument("jobs: more than one worker per device is for the CPU only");
  if (!c.solvers_per_problem.empty() && c.solvers_per_problem.size() != c.problems.size())
    return invalid_argument("solvers_per_problem: one list per problem");
  Shared s(c, store, cb);
  for (std::size_t i = 0; i < c.problems.size(); ++i) {
    s.first_trial.push_back(s.trials.size());
    for (const std::string& id :
         c.solvers_per_problem.empty() ? c.solvers : c.solvers_per_problem[i])
      s.trials.emplace_back(i, id);
  }
  s.first_trial.push_back(s.trials.size());
  s.t0 = now_s();
  std::vector<std::string> env = c.worker_env;
  if (!c.inherit_miopen_env) env.emplace_back("MIOPEN_*");  // pool.hpp: withheld from workers
  // Workers at once share the cores: `--jobs N` on the CPU, or one per device of a GPU node,
  // whose workers use threads for inputs and the fp64 reference (two 32-thread teams on 32 cores
  // slowed both).
  const int at_once = c.devices.empty() ? c.jobs : static_cast<int>(c.devices.size());
  if (at_once > 1 || c.threads > 0) {
    const int all = c.threads > 0 ? c.threads : omp_get_num_procs();
    env.push_back("OMP_NUM_THREADS=" + std::to_string(std::max(1, all / at_once)));
  }
  // One worker per device named, else `jobs` workers on `device`.
  const std::vector<std::string> names =
      c.devices.empty() ? std::vector<std::string>(static_cast<std::size_t>(c.jobs), c.device)
                        : c.devices;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Group*> groups(names.size(), nullptr);
  for (const std::string& name : names) {
    workers.push_back(std::make_unique<Worker>(
        std::vector<std::string>{c.worker_exe, "worker", "--device", name}, env));
    workers.back()->set_compile_deadline_ms(c.compile_timeout_s * 1000);
  }
  const bool several = c.devices.size() > 1;
  if (!several) {
    // One device: every worker starts here, before any trial, and one that cannot fails the
    // sweep. (Several devices start in their own threads, in parallel, and one that cannot is
    // left out.) A worker dies with the thread that started it (PR_SET_PDEATHSIG), so each job
    // thread starts its own.
    for (std::size_t j = 0; j < workers.size(); ++j) {
      if (auto st = workers[j]->ensure_started(); !st)
        return Status{st.code(), "worker start-up failed: " + st.message()};
      if (workers[j]->fingerprint().empty())
        return Status{StatusCode::internal_error, "worker start-up: no device fingerprint"};
      groups[j] = join(s, *workers[j], names[j]);
      if (!s.failure.is_ok()) return s.failure;
    }
  }
  if (workers.size() == 1) {
    job(s, *workers[0], names[0], groups[0]);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t j = 0; j < workers.size(); ++j)
      threads.emplace_back(
          [&s, &workers, &names, &groups, j] { job(s, *workers[j], names[j], groups[j]); });
    for (auto& t : threads) t.join();
  }
  if (!s.failure.is_ok()) return s.failure;
  if (s.groups.empty()) {
    return Status{s.first_start_failure.code(),
                  fmt::format("no device's worker started: {}", fmt::join(s.sum.lost, "; "))};
  }
  for (const auto& g : s.groups) {
    if (g->taken_count < s.trials.size() && !s.sum.interrupted) {
      s.sum.lost.push_back(fmt::format(
          "{} of {} trials not run on {}: every worker of that device was lost",
          s.trials.size() - g->taken_count, s.trials.size(), fmt::join(g->dev.names, ",")));
    }
    s.sum.devices.push_back(g->dev);
  }
  for (auto& w : workers) s.sum.worker_starts += w->starts();
  s.sum.wall_s = now_s() - s.t0;
  return s.sum;
}

}  // namespace convguard::probe
