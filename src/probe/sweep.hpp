// A sweep: every (problem, solver) trial of a probe, each in a sandboxed worker, recorded in the
// results database before (journal row) and after. Shared by `convguard probe` and by
// Context::plan's probe-when-unknown, so both classify, skip and record the same way.
//
// Skips, in order: evidence already here (ok/unsupported reused unless `force`; hang/crash/wrong
// skipped unless `retry_bad`), then the per-trial budget (a solver expected to run longer than
// `budget_s` is skipped, not mistaken for a hang, unless it is in `named`), and cpu:ref unless
// named: it is the fp64 reference itself, so verifying it proves nothing.
//
// With jobs > 1 the CPU's threads are split among that many workers, each its own process; the
// device fingerprint (from the workers) then records the smaller thread count, so timings taken
// that way never mix with single-worker evidence.
//
// With several `devices` (`--device cuda:all`), each gets one worker, all in parallel. Workers
// whose devices share a fingerprint (identical GPUs, same driver) share one trial list and take
// its trials in order as each becomes free (work stealing, so a slow device takes fewer); a
// device with another fingerprint gets a list of its own, since its evidence is another device's.
// A trial that hangs or faults costs only the worker it ran on (replaced, as with one device); a
// device whose worker cannot be started again is left out and the others finish its share.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"
#include "db/store.hpp"

namespace convguard::probe {

struct SweepConfig {
  std::vector<Problem> problems;
  std::vector<std::string> solvers;  // ids, tried in this order for each problem
  // When set (one list per problem), problem i tries these instead of `solvers`.
  std::vector<std::vector<std::string>> solvers_per_problem;
  // Once a solver verifies for a problem (run or reused), its later trials are dropped unrun and
  // unrecorded: for workarounds, where the first one that works is enough.
  bool stop_at_first_ok = false;
  std::vector<std::string> named;  // ids the user named exactly: exempt from the budget
  std::string device = "cpu";
  // When not empty: one worker per device named here, in parallel (jobs must be 1); `device` is
  // then unused.
  std::vector<std::string> devices;
  std::string worker_exe = "/proc/self/exe";  // a convguard binary (it has the worker command)
  std::vector<std::string> worker_env;        // NAME=VALUE entries, e.g. CONVGUARD_PLUGINS
  std::string command_prefix;                 // put in front of each stored reproduce command
  double timeout_s = 0;                       // 0: deadlines derived from each problem's cost
  double budget_s = 10;
  // > 0: a first run of a solver in `slow_stoppable` this many times slower than the fastest
  // first run already verified on the problem (this sweep's or reused) is stopped and recorded
  // skipped: it would never be chosen. Not before 1 s plus twice the fp64 reference's expected
  // time (the fresh worker that follows fills the problem's data again), and never for a solver
  // in `named`. 0: every trial runs to the end.
  double slow_factor = 0;
  std::vector<std::string> slow_stoppable;
  // A plugin's compile step (plugin.h prepare(): MIOpen's *CompileSolution) has a deadline of its
  // own; the trial's deadline starts after it. Exceeding it is `compile_timeout`, not a hang.
  double compile_timeout_s = 600;
  // Workers start without the user's MIOPEN_* variables (they change which solvers MIOpen
  // considers) unless this is set; the MIOpen plugin records the set it ran under.
  bool inherit_miopen_env = false;
  double timing_ms = 300;  // steady-state timing per trial at most (stops earlier when stable)
  bool force = false, retry_bad = false;
  int jobs = 1;
  int threads = 0;  // CPU threads in all (0: every core); split among the jobs
  std::uint64_t seed = 1;
};

// slow_factor's default for convguard's own CPU solvers: a first run 10x slower than a verified
// one never wins, and only convguard chooses among them. A vendor's solvers (plugins) and GPUs
// run every trial to the end by default: the vendor's own code may pick that solver in the
// user's process, so its hang or its time is what a probe is for.
inline constexpr double kCpuSlowFactor = 10;
// Sets c.slow_factor and c.slow_stoppable (after c.solvers): a factor `given` applies to every
// solver; none given, kCpuSlowFactor to convguard's own CPU solvers (not a plugin's) alone.
void set_slow_factor(SweepConfig& c, std::optional<double> given);

struct SweepDevice {
  std::string fingerprint, description;
  double gflops = 0, ref_gflops = 0, sample_gflops = 0;
  std::vector<std::string> names;  // the devices (workers) of this sweep with this fingerprint
};

struct SweepEvent {
  enum class Kind { ran, skipped, known_bad, reused };
  Kind kind = Kind::ran;
  std::size_t index = 0, total = 0;  // 1-based position in the sweep
  const Problem* problem = nullptr;
  std::string device;      // the device whose worker ran (or skipped) it, e.g. "hip:1"
  db::TrialRecord record;  // for known_bad/reused: the evidence already recorded
  double elapsed_s = 0;    // since the sweep started
  // What the trial cost the sweep: its worker's time from request to answer, a hang's
  // confirming second try included; 0 for what did not run here (reused, known bad, skipped).
  double trial_s = 0;
};

struct SweepSummary {
  std::map<std::string, int> counts;  // per status, plus "reused", "known bad" and "not needed"
  double wall_s = 0, sandbox_s = 0, hang_cost_s = 0;
  int worker_starts = 0;
  bool interrupted = false;  // the user stopped the sweep (SIGINT/SIGTERM): rerun to resume
  // One per fingerprint, in the order their first worker started.
  std::vector<SweepDevice> devices;
  // Devices left out ("hip:1: worker start-up failed: ..."), and trial lists left unfinished
  // because every worker of their fingerprint was lost. Empty when everything ran.
  std::vector<std::string> lost;
};

struct SweepCallbacks {
  // Once per fingerprint, when its first worker is ready (with several devices, from its thread).
  std::function<void(const SweepDevice&, std::size_t total)> started;
  std::function<void(const SweepEvent&)> trial;  // called from one thread at a time
};

// Runs the sweep. The store must be locked for writing (Store::lock_for_writing) and trials left
// running by an earlier probe recovered by the caller. Fails only on database errors and when no
// worker can start; every trial outcome, however bad, is a recorded result.
[[nodiscard]] Result<SweepSummary> run_sweep(const SweepConfig& c, db::Store& store,
                                             const SweepCallbacks& cb);

// Deadline model (ms). The first run: a floor of 3 s for start-up and planning plus the larger of
// 50x the expected run time (FLOPs over the worker's measured throughput: degenerate shapes run
// at a few percent of it) and 10x the slowest first run of another solver that verified on this
// problem; capped at 5 minutes. The rest (verification, timing): a floor plus three times the fp64
// reference's expected time, twice the timing budget and three first runs.
double first_run_deadline_ms(double expected_s, double slowest_ok_ms);
double rest_deadline_ms(double reference_s, double timing_ms, double first_ms);

}  // namespace convguard::probe
