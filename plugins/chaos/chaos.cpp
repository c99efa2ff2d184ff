// The chaos plugin: solvers that misbehave on command, to prove the probe's classification.
// Loaded like any vendor plugin (include/convguard/plugin.h). Never load it outside tests.
//
// Good solvers compute a naive fp32 forward convolution (any strides); the rest hang, crash,
// return wrong values or run out of memory, some only under the seeds' conditions:
//   chaos:hang_above_42       hangs when H or W > 42 (seed 002's boundary), correct below
//   chaos:hang_16_32_above_32 hangs for 16->32 channels above 32x32 (seed 004's table)
//   chaos:fault_bwd_weights   segfaults in backward-weights (seed 003), correct forward
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "chaos_common.hpp"
#include "convguard/plugin.h"

namespace {

using namespace convguard::test_plugins;

#define RUN_ARGS CG_TEST_RUN_ARGS

int run_hang_busy(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  busy_forever();
  return CG_OK;
}
int run_hang_sleep(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  for (;;) pause();
}
int run_deadlock(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&m);
  pthread_mutex_lock(&m);  // a default mutex locked twice by one thread: waits forever
  return CG_OK;
}
int run_segfault(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  std::fprintf(stderr, "chaos: writing to address %#lx\n",
               static_cast<unsigned long>(g_bad_address));
  segfault();
  return CG_OK;
}
int run_abort(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  std::fprintf(stderr,
               "chaos: Memory access fault by GPU node-1 (simulated) on address 0x7f0000001000. "
               "Reason: Page not present or supervisor privilege.\n");
  std::abort();
}
int run_sigbus(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  raise(SIGBUS);
  return CG_OK;
}
int run_sigfpe(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  raise(SIGFPE);
  return CG_OK;
}
int run_exit3(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  std::fprintf(stderr, "chaos: exiting with status 3\n");
  _exit(3);
}
int run_wrong(RUN_ARGS) {
  (void)msg, (void)len;
  naive_forward(p, x, w, y);
  const View v = view(y);
  // Every 50th element (by its first-dims position) off by one: ~2% wrong values.
  for (int64_t n = 0; n < v.dim[0]; ++n)
    for (int64_t k = 0; k < v.dim[1]; ++k)
      for (int64_t h = 0; h < v.dim[3]; h += 7) at(v, n, k, 0, h, 0) += 1.0f;
  return CG_OK;
}
int run_nan(RUN_ARGS) {
  (void)msg, (void)len;
  naive_forward(p, x, w, y);
  at(view(y), 0, 0, 0, 0, 0) = std::nanf("");
  return CG_OK;
}
int run_unwritten(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y, (void)msg, (void)len;
  return CG_OK;
}
uint64_t huge_workspace(const cg_problem*) {
  return uint64_t{1} << 60;
}
int run_error(RUN_ARGS) {
  (void)p, (void)x, (void)w, (void)y;
  say(msg, len, "chaos: simulated solver failure (status 7 from the vendor call)");
  return CG_ERROR;
}
// With CONVGUARD_CHAOS_STALL_ONCE=PATH, the first run anywhere (the one that creates PATH) stalls
// forever: a healthy solver that misses its first deadline, as on a loaded machine. The probe must
// not record it hang (it confirms a hang with a second try).
int run_slow(RUN_ARGS) {
  if (const char* marker = std::getenv("CONVGUARD_CHAOS_STALL_ONCE"); marker && *marker) {
    const int fd = open(marker, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd >= 0) {
      close(fd);
      for (;;) pause();
    }
  }
  usleep(300 * 1000);
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
int run_slow_2s(RUN_ARGS) {
  sleep(2);
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
int run_hang_above_42(RUN_ARGS) {
  if (p->input[1] > 42 || p->input[2] > 42) busy_forever();
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
int run_hang_16_32(RUN_ARGS) {
  if (p->c == 16 && p->k == 32 && (p->input[1] > 32 || p->input[2] > 32)) busy_forever();
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}
int check_fault_bwd_weights(const cg_problem* p, char* msg, size_t len) {
  if (p->dtype == 0 && (p->direction == 0 || p->direction == 2)) return CG_OK;
  say(msg, len, "chaos:fault_bwd_weights takes fp32 forward and backward-weights");
  return CG_NOT_APPLICABLE;
}
int run_fault_bwd_weights(RUN_ARGS) {
  if (p->direction == 2) {
    std::fprintf(stderr,
                 "chaos: Memory access fault by GPU node-1 (simulated, backward-weights)\n");
    segfault();
  }
  return run_good(p, x, w, y, nullptr, 0, msg, len);
}

const cg_solver kSolvers[] = {
    {"chaos:good", check_forward_f32, no_workspace, run_good},
    {"chaos:hang_busy", check_forward_f32, no_workspace, run_hang_busy},
    {"chaos:hang_sleep", check_forward_f32, no_workspace, run_hang_sleep},
    {"chaos:deadlock", check_forward_f32, no_workspace, run_deadlock},
    {"chaos:segfault", check_forward_f32, no_workspace, run_segfault},
    {"chaos:abort", check_forward_f32, no_workspace, run_abort},
    {"chaos:sigbus", check_forward_f32, no_workspace, run_sigbus},
    {"chaos:sigfpe", check_forward_f32, no_workspace, run_sigfpe},
    {"chaos:exit3", check_forward_f32, no_workspace, run_exit3},
    {"chaos:wrong", check_forward_f32, no_workspace, run_wrong},
    {"chaos:nan", check_forward_f32, no_workspace, run_nan},
    {"chaos:unwritten", check_forward_f32, no_workspace, run_unwritten},
    {"chaos:oom", check_forward_f32, huge_workspace, run_good},
    {"chaos:error", check_forward_f32, no_workspace, run_error},
    {"chaos:slow", check_forward_f32, no_workspace, run_slow},
    {"chaos:slow_2s", check_forward_f32, no_workspace, run_slow_2s},
    {"chaos:hang_above_42", check_forward_f32, no_workspace, run_hang_above_42},
    {"chaos:hang_16_32_above_32", check_forward_f32, no_workspace, run_hang_16_32},
    {"chaos:fault_bwd_weights", check_fault_bwd_weights, no_workspace, run_fault_bwd_weights},
};

}  // namespace

CG_TEST_PLUGIN("chaos", kSolvers)
