// The hostile plugin: solvers that attack the probe's sandbox itself rather than merely failing
// (the chaos plugin's job). Each does what a broken vendor library or a malicious solver could:
//   hostile:json_then_hang     prints a forged "ok" reply and progress line on stdout, then hangs
//   hostile:stdout_text        prints plain text on stdout, then computes correctly
//   hostile:fork_then_segfault forks a helper that holds every descriptor, then segfaults
//   hostile:setsid_orphan      starts a helper in its own session (setsid) that would outlive the
//                              probe, then computes correctly
//   hostile:huge_alloc         asks for 4 TiB with operator new
//   hostile:stderr_ff          writes bytes that are not UTF-8 (0xFF) to stderr and to its error
//   hostile:close_stderr       closes stdout and stderr, sleeps 3 s, then computes correctly
// Helpers write their pid to $CONVGUARD_HOSTILE_PID_DIR/<pid> so a test can check they are gone.
// tests/hostile_test.sh checks each is classified right and leaves nothing behind.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "chaos_common.hpp"
#include "convguard/plugin.h"

namespace {

using namespace convguard::test_plugins;

#define RUN_ARGS CG_TEST_RUN_ARGS

void note_pid() {
  const char* dir = std::getenv("CONVGUARD_HOSTILE_PID_DIR");
  if (!dir || !*dir) return;
  char path[4096];
  std::snprintf(path, sizeof path, "%s/%d", dir, static_cast<int>(getpid()));
  const int fd = open(path, O_CREAT | O_WRONLY, 0600);
  if (fd >= 0) close(fd);
}

int run_json_then_hang(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  for (unsigned seq = 0; seq < 4; ++seq) {
    std::printf("{\"seq\":%u,\"progress\":\"first_run\",\"first_ms\":0.001}\n", seq);
    std::printf("{\"seq\":%u,\"status\":\"ok\",\"reason\":\"\",\"first_ms\":0,\"median_ms\":0}\n",
                seq);
  }
  std::fflush(stdout);
  for (;;) pause();
}
int run_stdout_text(RUN_ARGS) {
  std::printf("hostile: a vendor library's chatter on stdout\n");
  std::fflush(stdout);
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
int run_fork_then_segfault(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  if (fork() == 0) {  // the helper: holds every inherited descriptor, for ~forever
    note_pid();
    sleep(1000);
    _exit(0);
  }
  usleep(100 * 1000);
  segfault();
  return CG_OK;
}
int run_setsid_orphan(RUN_ARGS) {
  if (fork() == 0) {
    setsid();  // out of the worker's process group and session
    if (fork() == 0) {
      note_pid();
      sleep(1000);
      _exit(0);
    }
    _exit(0);
  }
  usleep(100 * 1000);
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
char* volatile g_keep = nullptr;  // escapes: the compiler may not elide the allocation
int run_huge_alloc(RUN_ARGS) {
  g_keep = static_cast<char*>(::operator new (std::size_t{1} << 42));  // 4 TiB: std::bad_alloc
  g_keep[0] = 1;
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
int run_stderr_ff(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y;
  std::fprintf(stderr, "hostile: \xff\xfe not UTF-8 \xc3 (cut)\n");
  std::snprintf(msg, len, "hostile error \xff\xfe with bytes that are not UTF-8");
  return CG_ERROR;
}
int run_close_stderr(RUN_ARGS) {
  close(1);
  close(2);
  sleep(3);
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}

const cg_solver kSolvers[] = {
    {"hostile:json_then_hang", check_forward_f32, no_workspace, run_json_then_hang},
    {"hostile:stdout_text", check_forward_f32, no_workspace, run_stdout_text},
    {"hostile:fork_then_segfault", check_forward_f32, no_workspace, run_fork_then_segfault},
    {"hostile:setsid_orphan", check_forward_f32, no_workspace, run_setsid_orphan},
    {"hostile:huge_alloc", check_forward_f32, no_workspace, run_huge_alloc},
    {"hostile:stderr_ff", check_forward_f32, no_workspace, run_stderr_ff},
    {"hostile:close_stderr", check_forward_f32, no_workspace, run_close_stderr},
};

}  // namespace

CG_TEST_PLUGIN("hostile", kSolvers)
