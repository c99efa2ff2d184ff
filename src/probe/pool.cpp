#include "probe/pool.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "core/json_text.hpp"
#include "core/safe_text.hpp"

namespace convguard::probe {
namespace {

constexpr std::size_t kStderrTail = 4096;

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The workers of this process (all pools, all threads): reap_strays never touches them.
std::mutex g_workers_mutex;
std::set<pid_t> g_workers;
// Killed children that did not exit in time (stuck in the kernel): reaped whenever they exit,
// never waited for again.
std::set<pid_t> g_left_behind;
std::atomic<bool> g_subreaper{false};
std::atomic<int> g_stop{0};

}  // namespace

void request_stop(int sig) {
  g_stop.store(sig);
}
int stop_requested() {
  return g_stop.load();
}

void live_workers(pid_t pid, bool alive) {
  std::lock_guard<std::mutex> lock(g_workers_mutex);
  if (alive)
    g_workers.insert(pid);
  else
    g_workers.erase(pid);
}

bool become_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return false;
  g_subreaper = true;
  return true;
}

bool wait_for_exit(pid_t pid, int* status, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int pause_us = 200;
  for (;;) {
    const pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR)
      return true;  // not our child (already reaped): nothing to wait for
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(pause_us);
    pause_us = std::min(pause_us * 2, 20000);
  }
}

double kill_wait_seconds() {
  if (const char* v = std::getenv("CONVGUARD_KILL_WAIT_S")) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    // At least 0.1 s: a process killed a moment ago needs a moment to exit.
    if (end != v && *end == 0 && s >= 0.1 && s <= 3600) return s;
  }
  return 10;
}

namespace {
// Reaps the children left behind that have exited since.
void reap_left_behind() {
  std::lock_guard<std::mutex> lock(g_workers_mutex);
  for (auto it = g_left_behind.begin(); it != g_left_behind.end();) {
    int st = 0;
    const pid_t r = ::waitpid(*it, &st, WNOHANG);
    it = (r == *it || (r < 0 && errno != EINTR)) ? g_left_behind.erase(it) : std::next(it);
  }
}
void leave_behind(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_workers_mutex);
  g_left_behind.insert(pid);
}
}  // namespace

int reap_strays() {
  reap_left_behind();
  if (!g_subreaper) return 0;  // not ours to reap: a library caller's children are its own
  int killed = 0;
  const pid_t self = ::getpid();
  // Orphans of a dead worker (its helpers, even after setsid(), and theirs) are reparented to us
  // as subreaper. Repeat: killing one can orphan its own children onto us.
  for (int round = 0; round < 8; ++round) {
    std::vector<pid_t> strays;
    if (DIR* d = ::opendir("/proc")) {
      while (const dirent* e = ::readdir(d)) {
        char* endp = nullptr;
        const long pid = std::strtol(e->d_name, &endp, 10);
        if (pid <= 0 || *endp) continue;
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE* f = std::fopen(path, "r");
        if (!f) continue;
        char buf[512];
        const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        buf[n] = 0;
        const char* rp = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
        int ppid = 0;
        char state = 0;
        if (!rp || std::sscanf(rp + 1, " %c %d", &state, &ppid) != 2 || ppid != self) continue;
        std::lock_guard<std::mutex> lock(g_workers_mutex);
        if (!g_workers.count(static_cast<pid_t>(pid)) &&
            !g_left_behind.count(static_cast<pid_t>(pid)))
          strays.push_back(static_cast<pid_t>(pid));
      }
      ::closedir(d);
    }
    if (strays.empty()) break;
    for (pid_t p : strays) {
      ::kill(p, SIGKILL);
      int st = 0;
      if (!wait_for_exit(p, &st, kill_wait_seconds())) leave_behind(p);
      ++killed;
    }
  }
  return killed;
}

// An entry "PREFIX*" (no '=') of a worker's environment removes every inherited variable whose
// name starts with PREFIX (the MIOpen plugin's workers start without the user's MIOPEN_*).
static bool removes(const std::string& entry, const std::string& name) {
  return !entry.empty() && entry.back() == '*' && entry.find('=') == std::string::npos &&
         name.rfind(entry.substr(0, entry.size() - 1), 0) == 0;
}

std::string describe_signal(int sig) {
  const char* name = strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
}

Worker::Worker(std::vector<std::string> argv, std::vector<std::string> env)
    : argv_(std::move(argv)), env_(std::move(env)) {
  // A dead worker's pipe must give EPIPE, not kill the parent.
  ::signal(SIGPIPE, SIG_IGN);
}

Worker::~Worker() {
  if (pid_ > 0) (void)kill_and_reap();
}

namespace {
std::string left_behind_note(pid_t pid) {
  return "; the worker (pid " + std::to_string(pid) + ") did not exit within " +
         fmt::format("{:g}", kill_wait_seconds()) +
         " s of SIGKILL (stuck in the kernel, as in a driver call that never returns) and was left "
         "behind";
}
}  // namespace

std::string Worker::kill_and_reap() {
  const pid_t pid = pid_;
  const bool reaped = end_process().has_value();
  close_pipes();
  return reaped ? std::string() : left_behind_note(pid);
}

std::optional<int> Worker::end_process() {
  std::optional<int> result = 0;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // the whole process group: threads and any children
    ::kill(pid_, SIGKILL);   // (a zombie keeps the status it died with)
    int st = 0;
    if (wait_for_exit(pid_, &st, kill_wait_seconds())) {
      result = st;
    } else {
      // Stuck in the kernel: waiting on would hang the probe. The next trial gets a new worker.
      result = std::nullopt;
      leave_behind(pid_);
    }
    live_workers(pid_, false);
    reap_strays();
  }
  pid_ = -1;
  return result;
}

void Worker::close_pipes() {
  close_fd(to_child_);
  close_fd(from_child_);
  close_fd(err_child_);
  out_buf_.clear();
}

Status Worker::ensure_started(double startup_deadline_ms) {
  if (pid_ > 0) return Status::ok();
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) {
    return {StatusCode::internal_error, std::string("pipe: ") + std::strerror(errno)};
  }
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  // The child's environment is built here: between fork and exec only async-signal-safe calls
  // are allowed (the parent may run several workers from several threads).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& o : env_) {
      overridden = overridden || o.substr(0, o.find('=')) == name || removes(o, name);
    }
    if (!overridden) env_strings.push_back(entry);
  }
  for (const auto& o : env_) {
    if (o.find('=') != std::string::npos) env_strings.push_back(o);
  }
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  // Registered as a live worker before another thread's reap_strays() can see it: a worker just
  // forked by one job thread was otherwise a "stray" to another job whose worker had died, and
  // was killed before it said ready (its device then taken for lost, or its trial for an error).
  std::unique_lock registering(g_workers_mutex);
  const pid_t pid = ::fork();
  if (pid < 0) return {StatusCode::internal_error, std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so a kill reaches everything it started
    // A worker must not outlive its prober (kill -9 of the parent, or of a probing program):
    // the kernel kills it when the thread that started it exits.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);  // the parent died before prctl
    // Protocol on fds 3 and 4 only (protocol.hpp); stdin is /dev/null, stdout and stderr go
    // to the captured output. First lifted above 10, since a pipe may already sit on 0-4.
    const int req = ::fcntl(in[0], F_DUPFD_CLOEXEC, 10);
    const int rep = ::fcntl(out[1], F_DUPFD_CLOEXEC, 10);
    const int errw = ::fcntl(err[1], F_DUPFD_CLOEXEC, 10);
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (req < 0 || rep < 0 || errw < 0 || devnull < 0) ::_exit(126);
    ::dup2(devnull, 0);
    ::dup2(errw, 1);
    ::dup2(errw, 2);
    ::dup2(req, kRequestFd);
    ::dup2(rep, kReplyFd);
    ::execve(args[0], args.data(), envp.data());
    static const char msg[] = "convguard: cannot exec the worker\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  g_workers.insert(pid);
  registering.unlock();
  ::setpgid(pid, pid);  // also here: no race with the child's own call
  pid_ = pid;
  seq_ = 0;
  ++starts_;
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  err_child_ = err[0];
  err_buf_.clear();
  const double start = now_ms();
  for (;;) {
    const auto nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      const std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      try {
        const auto j = nlohmann::json::parse(line);
        if (j.value("ready", false)) {
          const std::string fingerprint = j.value("fingerprint", std::string());
          if (!fingerprint_.empty() && fingerprint != fingerprint_) {
            // A device that comes back from a restart as another (a reset that reordered the
            // GPUs, a driver reloaded underneath): whatever it ran would be recorded under the
            // first one's fingerprint. Refused, so its trials are errors, not evidence.
            const std::string left = kill_and_reap();
            return {StatusCode::internal_error,
                    "worker start-up: the device's fingerprint changed on restart, from '" +
                        fingerprint_ + "' to '" + fingerprint +
                        "'; nothing it runs is recorded under the first" + left};
          }
          fingerprint_ = fingerprint;
          gflops_ = j.value("gflops", 10.0);
          ref_gflops_ = j.value("ref_gflops", 0.5);
          sample_gflops_ = j.value("sample_gflops", 0.2);
          description_ = j.value("description", std::string());
          return Status::ok();
        }
      } catch (const std::exception&) {
      }
      const std::string left = kill_and_reap();
      return {StatusCode::internal_error, "worker start-up: unexpected line '" + line + "'" + left};
    }
    const double left = startup_deadline_ms - (now_ms() - start);
    if (left <= 0 || !pump(static_cast<int>(std::min(left, 200.0)))) {
      if (left > 0 && out_buf_.find('\n') != std::string::npos) continue;
      const std::string tail = take_stderr_tail();
      const std::string left_behind = kill_and_reap();
      return {StatusCode::internal_error,
              std::string(left <= 0 ? "worker did not say ready in time" : kExitedDuringStartup) +
                  (tail.empty() ? "" : ": " + tail) + left_behind};
    }
  }
}

bool Worker::pump(int timeout_ms) {
  // A closed stderr (the worker, or a solver, closed it) is dropped from the poll set: polling a
  // hung-up pipe returns at once, forever (it once spun the prober at 100% CPU).
  pollfd fds[2] = {{from_child_, POLLIN, 0}, {err_child_, POLLIN, 0}};
  const int n = ::poll(fds, 2, timeout_ms);
  if (n <= 0) return true;
  char buf[8192];
  if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
    const ssize_t r = ::read(err_child_, buf, sizeof buf);
    if (r > 0) {
      err_buf_.append(buf, static_cast<std::size_t>(r));
      if (err_buf_.size() > 2 * kStderrTail) err_buf_.erase(0, err_buf_.size() - kStderrTail);
    } else if (r == 0 || errno != EINTR) {
      close_fd(err_child_);
    }
  }
  if (fds[0].revents & (POLLIN | POLLHUP)) {
    const ssize_t r = ::read(from_child_, buf, sizeof buf);
    if (r == 0) return false;
    if (r > 0) out_buf_.append(buf, static_cast<std::size_t>(r));
  }
  return true;
}

std::string Worker::take_stderr_tail() {
  // Drain what is left, then keep the last lines.
  if (err_child_ >= 0) {
    char buf[8192];
    const int fl = ::fcntl(err_child_, F_GETFL);
    ::fcntl(err_child_, F_SETFL, fl | O_NONBLOCK);
    ssize_t r;
    while ((r = ::read(err_child_, buf, sizeof buf)) > 0)
      err_buf_.append(buf, static_cast<std::size_t>(r));
    ::fcntl(err_child_, F_SETFL, fl);
  }
  // Cut on a character boundary: a tail starting inside a UTF-8 sequence is not text.
  std::string t = utf8_tail(err_buf_, kStderrTail);
  err_buf_.clear();
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

Outcome Worker::run(const TrialRequest& request, double deadline_ms,
                    const std::function<double(double)>& rest_ms, double stop_slow_ms) {
  Outcome o;
  const double start = now_ms();
  if (auto st = ensure_started(); !st) {
    o.status = "error";
    o.reason = st.message();
    o.not_started = true;
    o.start_exited = st.message().starts_with(kExitedDuringStartup);
    return o;
  }
  TrialRequest r = request;
  r.seq = ++seq_;
  err_buf_.clear();
  bool first_run_seen = false;
  int phase = 0;  // 0 before compiling, 1 compiling, 2 running, 3 verifying and timing
  const double run_deadline_ms = deadline_ms;
  double run_start_ms = 0;  // when the compile step ended: the trial's deadline counts from there
  double plan_at_ms = -1;   // when the worker said it starts planning (stop_slow_ms counts from it)
  o.deadline_ms = deadline_ms;
  bool exited = !write_line(to_child_, encode(r));
  for (;;) {
    const auto nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      const std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      o.elapsed_ms = now_ms() - start;
      // Parsed once, here: whose it is (its seq), a progress line, or the reply.
      const auto j = nlohmann::json::parse(line, nullptr, false);
      std::uint64_t seq = 0;
      double first_ms = 0;
      std::string progress;
      bool ours = false;
      try {
        json_field(j, "seq", seq, true);
        ours = seq == r.seq;
        json_field(j, "first_ms", first_ms);
        json_field(j, "progress", progress);
        json_field(j, "compile_ms", o.compile_ms);
      } catch (const std::exception&) {
      }
      if (ours && j.contains("progress")) {
        // Each phase moves the deadline once and only forwards (compiling, compiled, first run),
        // so no output can keep a trial alive forever. Compiling gets the compile deadline; the
        // trial's own deadline starts when it ends; the rest is sized from the first run's time.
        if (progress == "planning") {
          // The first run's clock (stop_slow_ms) starts here; deadlines stay as they are.
          if (!first_run_seen && plan_at_ms < 0) plan_at_ms = o.elapsed_ms;
          continue;
        }
        if (progress == "compiling" && phase == 0 && compile_deadline_ms_ > 0) {
          deadline_ms = o.elapsed_ms + compile_deadline_ms_;
          o.compile_deadline_ms = compile_deadline_ms_;
          phase = 1;
        } else if (progress == "compiled" && phase <= 1) {
          deadline_ms = o.elapsed_ms + run_deadline_ms;
          run_start_ms = o.elapsed_ms;
          phase = 2;
        } else if (progress != "compiling" && progress != "compiled" && !first_run_seen) {
          deadline_ms = o.elapsed_ms + rest_ms(std::max(0.0, first_ms));
          first_run_seen = true;
          phase = 3;
        }
        o.deadline_ms = phase == 1 ? run_deadline_ms : deadline_ms - run_start_ms;
        continue;
      }
      auto rep = ours ? decode_reply_json(j)
                      : Result<TrialReply>(
                            Status{StatusCode::internal_error,
                                   "worker protocol: a line that is not the reply to request " +
                                       std::to_string(r.seq) + ": '" + line.substr(0, 200) + "'"});
      o.stderr_tail = take_stderr_tail();
      if (!rep) {
        o.status = "error";
        o.reason = rep.status().message();
        o.reason += kill_and_reap();
        return o;
      }
      o.status = rep->status;
      o.reason = rep->reason;
      o.reply = *rep;
      if (rep->fatal)  // its device context is lost: the next trial gets a fresh one
        o.reason += kill_and_reap();
      return o;
    }
    if (exited) break;
    if (const int sig = stop_requested()) {
      o.elapsed_ms = now_ms() - start;
      o.status = "interrupted";
      o.reason = "interrupted by the user (" + describe_signal(sig) +
                 ") during the trial; not evidence against the solver: the next probe runs it";
      o.stderr_tail = take_stderr_tail();
      o.reason += kill_and_reap();
      return o;
    }
    const double left = deadline_ms - (now_ms() - start);
    o.deadline_ms = phase == 1 ? run_deadline_ms : deadline_ms - run_start_ms;
    // Before the hang check: a first run past both limits is slow as far as anyone knows. Counted
    // from the worker's "planning" line: a fresh worker's start, the problem's data, check() and
    // the workspace are not the solver's first run (a trial without that line is never stopped).
    const bool slow_watch = stop_slow_ms > 0 && !first_run_seen && phase != 1 && plan_at_ms >= 0;
    const double slow_left = slow_watch ? plan_at_ms + stop_slow_ms - (now_ms() - start) : left;
    if (slow_watch && slow_left <= 0) {
      o.elapsed_ms = now_ms() - start;
      o.status = "skipped";
      o.slow_ms = o.elapsed_ms - plan_at_ms;
      o.reason = "stopped after " + std::to_string(static_cast<long>(o.slow_ms)) +
                 " ms with its first run unfinished (planning included); worker killed";
      o.stderr_tail = take_stderr_tail();
      o.reason += kill_and_reap();
      return o;
    }
    if (left <= 0 && phase == 1) {
      // Compiling took longer than its deadline: slow, not stuck (MIOpen's first compile can take
      // minutes); not evidence against the solver, and the next probe tries again.
      o.elapsed_ms = now_ms() - start;
      o.compile_ms = o.elapsed_ms;
      o.status = "compile_timeout";
      o.reason = "the compile step took longer than its deadline of " +
                 std::to_string(static_cast<long>(compile_deadline_ms_)) +
                 " ms (--compile-timeout); worker killed; not evidence against the solver";
      o.stderr_tail = take_stderr_tail();
      o.reason += kill_and_reap();
      return o;
    }
    if (left <= 0) {
      o.elapsed_ms = now_ms() - start;
      o.status = "hang";
      o.reason =
          "no answer within the deadline of " + std::to_string(static_cast<long>(o.deadline_ms)) +
          " ms; worker killed" +
          (first_run_seen ? " (its first run had finished: the hang is in verification or timing)"
                          : "") +
          (phase >= 2 && o.compile_ms > 0
               ? " (counted after its compile step, which took " +
                     std::to_string(static_cast<long>(o.compile_ms)) + " ms)"
               : "");
      o.stderr_tail = take_stderr_tail();
      o.reason += kill_and_reap();
      return o;
    }
    // The worker's end is seen by its pid, not by the end of its pipes: a child it forked may
    // hold them open (a helper of a solver that then crashed was once recorded hang).
    const bool open = pump(static_cast<int>(std::min({left, slow_left, 100.0})) + 1);
    siginfo_t info{};
    exited = !open ||
             (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
              info.si_pid == pid_);
    if (exited) pump(0);  // a reply written just before the end is still the reply
  }
  // The worker died. Kill what it left in its group, reap it and say how.
  const pid_t pid = pid_;
  const std::optional<int> ended = end_process();
  o.elapsed_ms = now_ms() - start;
  o.stderr_tail = take_stderr_tail();
  close_pipes();
  o.status = "crash";
  const int st = ended.value_or(0);
  if (!ended) {
    o.reason = "the worker's reply pipe closed during the trial; how it ended is unknown" +
               left_behind_note(pid);
  } else if (WIFSIGNALED(st)) {
    o.signal = WTERMSIG(st);
    o.reason = "worker killed by " + describe_signal(o.signal);
  } else if (WIFEXITED(st)) {
    o.exit_code = WEXITSTATUS(st);
    o.reason = "worker exited with status " + std::to_string(o.exit_code) + " during the trial";
  } else {
    o.reason = "worker died during the trial";
  }
  // A stop asked for meanwhile (Ctrl-C, Slurm's scancel): the signal that stops the prober may
  // have reached the worker too (Slurm signals every process of the job; a terminal, its whole
  // foreground group), and whichever the loop saw first decided between this and `interrupted`
  // above. Not evidence against the solver either way: interrupted, run again next time.
  if (const int sig = stop_requested()) {
    o.status = "interrupted";
    o.reason = "interrupted by the user (" + describe_signal(sig) +
               ") during the trial, and the worker ended too (" + o.reason +
               "); not evidence against the solver: the next probe runs it";
    o.signal = 0, o.exit_code = -1;
  }
  return o;
}

}  // namespace convguard::probe
