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

#include "convguard/plugin.h"

namespace {

volatile std::uintptr_t g_bad_address = 16;  // volatile: the compiler cannot fold the fault away
volatile int g_spin = 1;

void say(char* msg, size_t len, const char* text) {
  std::snprintf(msg, len, "%s", text);
}

bool forward_f32(const cg_problem* p) {
  return p->direction == 0 && p->dtype == 0;
}

int check_forward_f32(const cg_problem* p, char* msg, size_t len) {
  if (forward_f32(p)) return CG_OK;
  say(msg, len, "chaos solvers compute fp32 forward only");
  return CG_NOT_APPLICABLE;
}

uint64_t no_workspace(const cg_problem*) {
  return 0;
}

// Dims of a 4D or 5D tensor as (n, c, d, h, w) with strides.
struct View {
  float* data;
  int64_t dim[5], stride[5];
};
View view(const cg_tensor* t) {
  View v{static_cast<float*>(t->data), {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}};
  for (int i = 0; i < t->rank; ++i) {
    const int j = (t->rank == 4 && i >= 2) ? i + 1 : i;
    v.dim[j] = t->dims[i];
    v.stride[j] = t->strides[i];
  }
  return v;
}
float& at(const View& v, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return v.data[a * v.stride[0] + b * v.stride[1] + c * v.stride[2] + d * v.stride[3] +
                e * v.stride[4]];
}

void naive_forward(const cg_problem* p, const cg_tensor* xt, const cg_tensor* wt,
                   const cg_tensor* yt) {
  const View x = view(xt), w = view(wt), y = view(yt);
  const int64_t cg = p->c / p->g, kg = p->k / p->g;
  for (int64_t n = 0; n < y.dim[0]; ++n)
    for (int64_t k = 0; k < y.dim[1]; ++k)
      for (int64_t od = 0; od < y.dim[2]; ++od)
        for (int64_t oh = 0; oh < y.dim[3]; ++oh)
          for (int64_t ow = 0; ow < y.dim[4]; ++ow) {
            double s = 0;
            const int64_t g = k / kg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t a = 0; a < w.dim[2]; ++a)
                for (int64_t b = 0; b < w.dim[3]; ++b)
                  for (int64_t e = 0; e < w.dim[4]; ++e) {
                    const int64_t id = od * p->stride[0] - p->pad_begin[0] + a * p->dilation[0];
                    const int64_t ih = oh * p->stride[1] - p->pad_begin[1] + b * p->dilation[1];
                    const int64_t iw = ow * p->stride[2] - p->pad_begin[2] + e * p->dilation[2];
                    if (id < 0 || id >= x.dim[2] || ih < 0 || ih >= x.dim[3] || iw < 0 ||
                        iw >= x.dim[4])
                      continue;
                    s += static_cast<double>(at(x, n, g * cg + c, id, ih, iw)) *
                         at(w, k, c, a, b, e);
                  }
            at(y, n, k, od, oh, ow) = static_cast<float>(s);
          }
}

void busy_forever() {
  while (g_spin) {
  }
}
void segfault() {
  *reinterpret_cast<volatile int*>(g_bad_address) = 1;
}

#define RUN_ARGS                                                                           \
  const cg_problem *p, const cg_tensor *x, const cg_tensor *w, const cg_tensor *y, void *, \
      uint64_t, char *msg, size_t len

int run_good(RUN_ARGS) {
  (void)msg, (void)len;
  naive_forward(p, x, w, y);
  return CG_OK;
}
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

int always_available(char*, size_t) {
  return CG_OK;
}

const cg_plugin kPlugin = {CONVGUARD_PLUGIN_ABI_VERSION,
                           "chaos",
                           always_available,
                           sizeof kSolvers / sizeof kSolvers[0],
                           kSolvers,
                           CG_DEVICE_CPU,
                           nullptr,
                           nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) const cg_plugin* convguard_plugin(void) {
  return &kPlugin;
}
