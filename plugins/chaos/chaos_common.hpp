// What the test plugins (chaos, hostile) share: a naive fp32 forward convolution that any "good"
// solver computes, the fp32-forward check, and the ways to misbehave. Header-only, for test
// plugins only.
#pragma once

#include <cstdint>
#include <cstdio>

#include "convguard/plugin.h"

namespace convguard::test_plugins {

inline volatile std::uintptr_t g_bad_address =
    16;  // volatile: the compiler cannot fold the fault away
inline volatile int g_spin = 1;

inline void say(char* msg, size_t len, const char* text) {
  std::snprintf(msg, len, "%s", text);
}

inline bool forward_f32(const cg_problem* p) {
  return p->direction == 0 && p->dtype == 0;
}

inline int check_forward_f32(const cg_problem* p, char* msg, size_t len) {
  if (forward_f32(p)) return CG_OK;
  say(msg, len, "chaos solvers compute fp32 forward only");
  return CG_NOT_APPLICABLE;
}

inline uint64_t no_workspace(const cg_problem*) {
  return 0;
}

// Dims of a 4D or 5D tensor as (n, c, d, h, w) with strides.
struct View {
  float* data;
  int64_t dim[5], stride[5];
};
inline View view(const cg_tensor* t) {
  View v{static_cast<float*>(t->data), {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}};
  for (int i = 0; i < t->rank; ++i) {
    const int j = (t->rank == 4 && i >= 2) ? i + 1 : i;
    v.dim[j] = t->dims[i];
    v.stride[j] = t->strides[i];
  }
  return v;
}
inline float& at(const View& v, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return v.data[a * v.stride[0] + b * v.stride[1] + c * v.stride[2] + d * v.stride[3] +
                e * v.stride[4]];
}

// Accumulates in fp32 straight into y, one output row per (filter tap, input channel), the row's
// valid columns computed once: 10x faster than a loop over every output element's taps with
// a bounds test per tap. A "good" solver must stay well inside the probe's derived deadlines on a
// loaded machine (the per-element form took 15.7 s on a 256->512 3x3 64x64 layer, past the 10 s
// first deadline even on a quiet 2-core machine; under a job array it missed the 4x confirmation).
inline int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline void naive_forward(const cg_problem* p, const cg_tensor* xt, const cg_tensor* wt,
                          const cg_tensor* yt) {
  const View x = view(xt), w = view(wt), y = view(yt);
  const int64_t cg = p->c / p->g, kg = p->k / p->g;
  const int64_t sw = p->stride[2], xs = x.stride[4], ys = y.stride[4];
  for (int64_t n = 0; n < y.dim[0]; ++n)
    for (int64_t k = 0; k < y.dim[1]; ++k) {
      for (int64_t od = 0; od < y.dim[2]; ++od)
        for (int64_t oh = 0; oh < y.dim[3]; ++oh)
          for (int64_t ow = 0; ow < y.dim[4]; ++ow) at(y, n, k, od, oh, ow) = 0.0f;
      const int64_t g = k / kg;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t a = 0; a < w.dim[2]; ++a)
          for (int64_t b = 0; b < w.dim[3]; ++b)
            for (int64_t e = 0; e < w.dim[4]; ++e) {
              const float wv = at(w, k, c, a, b, e);
              // Output columns whose input column iw = ow * sw + off lies inside x.
              const int64_t off = e * p->dilation[2] - p->pad_begin[2];
              const int64_t first = ceil_div(-off, sw), lo = first > 0 ? first : 0;
              const int64_t hi_in = floor_div(x.dim[4] - 1 - off, sw) + 1;
              const int64_t hi = hi_in < y.dim[4] ? hi_in : y.dim[4];
              if (lo >= hi) continue;
              for (int64_t od = 0; od < y.dim[2]; ++od) {
                const int64_t id = od * p->stride[0] - p->pad_begin[0] + a * p->dilation[0];
                if (id < 0 || id >= x.dim[2]) continue;
                for (int64_t oh = 0; oh < y.dim[3]; ++oh) {
                  const int64_t ih = oh * p->stride[1] - p->pad_begin[1] + b * p->dilation[1];
                  if (ih < 0 || ih >= x.dim[3]) continue;
                  float* yr = &at(y, n, k, od, oh, 0);
                  const float* xr = &at(x, n, g * cg + c, id, ih, 0) + off * xs;
                  if (ys == 1 && sw * xs == 1) {  // unit strides: a loop the compiler vectorizes
                    for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xr[ow];
                  } else {
                    for (int64_t ow = lo; ow < hi; ++ow) yr[ow * ys] += wv * xr[ow * sw * xs];
                  }
                }
              }
            }
    }
}

inline void busy_forever() {
  while (g_spin) {
  }
}
inline void segfault() {
  *reinterpret_cast<volatile int*>(g_bad_address) = 1;
}

// The signature every test solver's run() has (convguard/plugin.h's cg_solver::run).
#define CG_TEST_RUN_ARGS                                                                   \
  const cg_problem *p, const cg_tensor *x, const cg_tensor *w, const cg_tensor *y, void *, \
      uint64_t, char *msg, size_t len

inline int run_good(CG_TEST_RUN_ARGS) {
  (void)msg, (void)len;
  naive_forward(p, x, w, y);
  return CG_OK;
}

inline int always_available(char*, size_t) {
  return CG_OK;
}

}  // namespace convguard::test_plugins

// Defines the plugin entry point for a CPU test plugin NAME with the solver table SOLVERS.
#define CG_TEST_PLUGIN(NAME, SOLVERS)                                                         \
  namespace {                                                                                 \
  const cg_plugin kPlugin = {CONVGUARD_PLUGIN_ABI_VERSION,                                    \
                             NAME,                                                            \
                             convguard::test_plugins::always_available,                       \
                             sizeof SOLVERS / sizeof SOLVERS[0],                              \
                             SOLVERS,                                                         \
                             CG_DEVICE_CPU,                                                   \
                             nullptr,                                                         \
                             nullptr,                                                         \
                             nullptr};                                                        \
  }                                                                                           \
  extern "C" __attribute__((visibility("default"))) const cg_plugin* convguard_plugin(void) { \
    return &kPlugin;                                                                          \
  }
