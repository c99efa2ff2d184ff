#include "probe/pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

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

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

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
  if (pid_ > 0) kill_and_reap();
}

void Worker::kill_and_reap() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // the whole process group: threads and any children
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
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
    for (const auto& o : env_) overridden = overridden || o.substr(0, o.find('=')) == name;
    if (!overridden) env_strings.push_back(entry);
  }
  env_strings.insert(env_strings.end(), env_.begin(), env_.end());
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return {StatusCode::internal_error, std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so a kill reaches everything it started
    // A worker must not outlive its prober (kill -9 of the parent, or of a probing program):
    // the kernel kills it when the thread that started it exits.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);  // the parent died before prctl
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execve(args[0], args.data(), envp.data());
    static const char msg[] = "convguard: cannot exec the worker\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with the child's own call
  pid_ = pid;
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
          gflops_ = j.value("gflops", 10.0);
          ref_gflops_ = j.value("ref_gflops", 0.5);
          sample_gflops_ = j.value("sample_gflops", 0.2);
          fingerprint_ = j.value("fingerprint", std::string());
          description_ = j.value("description", std::string());
          return Status::ok();
        }
      } catch (const std::exception&) {
      }
      kill_and_reap();
      return {StatusCode::internal_error, "worker start-up: unexpected line '" + line + "'"};
    }
    const double left = startup_deadline_ms - (now_ms() - start);
    if (left <= 0 || !pump(static_cast<int>(std::min(left, 200.0)))) {
      if (left > 0 && out_buf_.find('\n') != std::string::npos) continue;
      const std::string tail = take_stderr_tail();
      kill_and_reap();
      return {StatusCode::internal_error, std::string(left <= 0 ? "worker did not say ready in time"
                                                                : "worker exited during start-up") +
                                              (tail.empty() ? "" : ": " + tail)};
    }
  }
}

bool Worker::pump(int timeout_ms) {
  pollfd fds[2] = {{from_child_, POLLIN, 0}, {err_child_, POLLIN, 0}};
  const int n = ::poll(fds, 2, timeout_ms);
  if (n <= 0) return true;
  char buf[8192];
  if (fds[1].revents & (POLLIN | POLLHUP)) {
    const ssize_t r = ::read(err_child_, buf, sizeof buf);
    if (r > 0) {
      err_buf_.append(buf, static_cast<std::size_t>(r));
      if (err_buf_.size() > 2 * kStderrTail) err_buf_.erase(0, err_buf_.size() - kStderrTail);
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

Outcome Worker::run(const TrialRequest& r, double deadline_ms,
                    const std::function<double(double)>& rest_ms) {
  Outcome o;
  const double start = now_ms();
  if (auto st = ensure_started(); !st) {
    o.status = "error";
    o.reason = st.message();
    return o;
  }
  err_buf_.clear();
  bool first_run_seen = false;
  o.deadline_ms = deadline_ms;
  bool eof = !write_all(to_child_, encode(r) + "\n");
  while (!eof) {
    const auto nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      const std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      o.elapsed_ms = now_ms() - start;
      if (line.find("\"progress\"") != std::string::npos) {
        try {
          const auto j = nlohmann::json::parse(line);
          if (j.contains("progress")) {
            deadline_ms = o.elapsed_ms + rest_ms(j.value("first_ms", 0.0));
            first_run_seen = true;
            continue;
          }
        } catch (const std::exception&) {
        }
      }
      auto rep = decode_reply(line);
      o.stderr_tail = take_stderr_tail();
      if (!rep) {
        o.status = "error";
        o.reason = rep.status().message();
        kill_and_reap();
        return o;
      }
      o.status = rep->status;
      o.reason = rep->reason;
      o.reply = *rep;
      if (rep->fatal)
        kill_and_reap();  // its device context is lost: the next trial gets a fresh one
      return o;
    }
    const double left = deadline_ms - (now_ms() - start);
    o.deadline_ms = deadline_ms;
    if (left <= 0) {
      o.elapsed_ms = now_ms() - start;
      o.status = "hang";
      o.reason =
          "no answer within the deadline of " + std::to_string(static_cast<long>(deadline_ms)) +
          " ms; worker killed" +
          (first_run_seen ? " (its first run had finished: the hang is in verification or timing)"
                          : "");
      o.stderr_tail = take_stderr_tail();
      kill_and_reap();
      return o;
    }
    eof = !pump(static_cast<int>(std::min(left, 100.0)) + 1);
  }
  // stdout closed: the worker died. Reap it and say how.
  int st = 0;
  pid_t got = 0;
  for (int i = 0; i < 200 && (got = ::waitpid(pid_, &st, WNOHANG)) == 0; ++i) ::usleep(5000);
  if (got == 0) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
  }
  o.elapsed_ms = now_ms() - start;
  o.stderr_tail = take_stderr_tail();
  pid_ = -1;
  close_fd(to_child_);
  close_fd(from_child_);
  close_fd(err_child_);
  out_buf_.clear();
  o.status = "crash";
  if (WIFSIGNALED(st)) {
    o.signal = WTERMSIG(st);
    o.reason = "worker killed by " + describe_signal(o.signal);
  } else if (WIFEXITED(st)) {
    o.exit_code = WEXITSTATUS(st);
    o.reason = "worker exited with status " + std::to_string(o.exit_code) + " during the trial";
  } else {
    o.reason = "worker died during the trial";
  }
  return o;
}

}  // namespace convguard::probe
