// The parent's side of the sandbox: a worker process it starts once, feeds trials over pipes and
// waits for with a deadline. A worker that misses its deadline is killed with its whole process
// group (hang); one that dies is reaped and its signal or exit code recorded (crash); either way
// the next trial starts a fresh worker. The parent never runs solver code itself.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "probe/protocol.hpp"

namespace convguard::probe {

struct Outcome {
  // ok/wrong/error/oom/unsupported come from the worker's reply; hang, crash and compile_timeout
  // are the parent's findings.
  std::string status;
  std::string reason;
  std::optional<TrialReply> reply;
  int signal = 0;           // crash by signal
  int exit_code = -1;       // crash by exit
  std::string stderr_tail;  // the worker's last stderr lines
  double elapsed_ms = 0;    // wall time the parent waited
  double deadline_ms = 0;   // the deadline in force at the end (from the trial's start, after
                            // its compile step when it has one)
  // A plugin's compile step (protocol.hpp "compiling"/"compiled"): how long it took (so far, for
  // compile_timeout) and the deadline it had; 0 when the solver has none.
  double compile_ms = 0, compile_deadline_ms = 0;
  // Stopped by stop_slow_ms (status "skipped"): how long its first run had gone, planning
  // included (a lower bound of its first run).
  double slow_ms = 0;
  // No worker could be started for it (status "error"): nothing of the trial ran.
  bool not_started = false;
  // ... because the worker exited during start-up (its device could not be opened, it crashed),
  // not because it was slow to say ready: after a hang, that the device is in trouble.
  bool start_exited = false;
};

// How a start-up failure whose worker exited (rather than stayed silent) begins.
inline constexpr const char* kExitedDuringStartup = "worker exited during start-up";

class Worker {
 public:
  // argv of the worker command (e.g. {"/proc/self/exe", "worker"}), extra environment entries:
  // NAME=VALUE sets one; "PREFIX*" withholds every inherited variable whose name starts with
  // PREFIX.
  Worker(std::vector<std::string> argv, std::vector<std::string> env);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the worker if none runs and waits for its ready line.
  [[nodiscard]] Status ensure_started(double startup_deadline_ms = 20000);
  // Runs one trial. `deadline_ms` bounds the first run (planning included); when the worker reports
  // the first run's time, `rest_ms(first_ms)` gives the deadline for the rest (verification and
  // timing), counted from that report, so slow-but-correct solvers are measured, not killed.
  // `stop_slow_ms` > 0: a first run still going that long after the worker's "planning" line is
  // stopped, status "skipped" (Outcome::slow_ms): slow, not evidence against the solver (the sweep
  // sets it from a faster solver already verified on the problem). Afterwards the worker is alive
  // or has been reaped.
  Outcome run(const TrialRequest& r, double deadline_ms,
              const std::function<double(double)>& rest_ms, double stop_slow_ms = 0);
  // The deadline of a plugin's compile step, which then runs before `deadline_ms` starts counting
  // (0: the compile step counts against the trial's deadline). Exceeding it: "compile_timeout".
  void set_compile_deadline_ms(double ms) { compile_deadline_ms_ = ms; }
  // From the worker's ready line: its throughput on a small direct convolution and of the fp64
  // reference, full and per point (the units of deadlines and budgets), and the device it runs on.
  double gflops() const { return gflops_; }
  double ref_gflops() const { return ref_gflops_; }
  double sample_gflops() const { return sample_gflops_; }  // per-point reference, one thread
  const std::string& fingerprint() const { return fingerprint_; }
  const std::string& description() const { return description_; }
  int starts() const { return starts_; }
  bool alive() const { return pid_ > 0; }

 private:
  // end_process() then close_pipes(); what to add to the trial's reason ("" when the worker was
  // reaped, else a sentence naming the worker left behind).
  [[nodiscard]] std::string kill_and_reap();
  // Kills the worker's process group, reaps the worker and any strays; its wait status, or none
  // when it did not exit within kill_wait_seconds() (then it is left behind).
  std::optional<int> end_process();
  void close_pipes();
  // Reads available output; returns false on EOF of stdout.
  bool pump(int timeout_ms);
  std::string take_stderr_tail();

  std::vector<std::string> argv_, env_;
  pid_t pid_ = -1;
  std::uint64_t seq_ = 0;  // requests sent to the current worker process
  int to_child_ = -1, from_child_ = -1, err_child_ = -1;
  std::string out_buf_, err_buf_;
  double gflops_ = 10, ref_gflops_ = 0.5, sample_gflops_ = 0.2;
  // Set by the first process's ready line; a restart must report the same fingerprint.
  std::string fingerprint_, description_;
  int starts_ = 0;
  double compile_deadline_ms_ = 0;
};

// Makes this process the subreaper of everything its workers start (PR_SET_CHILD_SUBREAPER), so a
// worker's orphaned helpers (setsid() included) come back to it and reap_strays() can end them.
// For the CLI's probe: a library caller's process is left as it is. False if the kernel refuses.
bool become_subreaper();
// Kills and reaps every child of this process that is not a live worker; does nothing unless
// become_subreaper() was called. Returns how many it ended. Called after every worker's death.
int reap_strays();
// The registry reap_strays() spares (Worker keeps it; exposed for tests).
void live_workers(pid_t pid, bool alive);

// waitpid with a deadline: true once `pid` is reaped (its wait status in *status), false if it
// has not exited after `seconds`. A process killed with SIGKILL inside an uninterruptible kernel
// wait (state D: a driver call that never returns, a dead network filesystem) does not exit until
// that wait ends, maybe never; an unbounded waitpid would hang the probe with it.
[[nodiscard]] bool wait_for_exit(pid_t pid, int* status, double seconds);
// How long a killed worker (or stray) may take to exit before it is left behind: 10 s, or
// CONVGUARD_KILL_WAIT_S. A child left behind is reaped later, whenever it exits.
double kill_wait_seconds();

// A user's stop (SIGINT, SIGTERM): the CLI's handler calls request_stop(sig) (async-signal-safe);
// a running trial's wait ends within ~100 ms with status "interrupted" (its worker killed) and
// sweeps take no further trial. An interrupted trial is not evidence against its solver.
void request_stop(int sig);
int stop_requested();  // the signal, or 0

// "signal 11 (Segmentation fault)"
std::string describe_signal(int sig);

}  // namespace convguard::probe
