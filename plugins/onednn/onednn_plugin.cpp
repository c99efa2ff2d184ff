// The oneDNN plugin: every convolution implementation of oneDNN (libdnnl.so.2, loaded at run time)
// as convguard solvers, `onednn:<direction>:<impl>` on the caller's tensors as they are and
// `onednn:<direction>:<impl>:any` on oneDNN's preferred layouts with the reorders from and to the
// caller's layout inside the call (onednn_conv.hpp). <impl> is what oneDNN's primitive-descriptor
// iterator reports (impl_info_str: "jit:avx512_core" -> jit_avx512_core, "x64:gemm:jit" ->
// x64_gemm_jit).
//
// The plugin ABI wants the solver list when the plugin loads, but oneDNN only names the
// implementations that apply to a given problem. So the list is discovered at load: the iterator
// is walked over a fixed set of shapes (first layers, 1x1, 3x3, strided, dilated, grouped,
// depthwise, 3D; f32 and bf16; NCHW and NHWC; both variants) and every name it reports becomes a
// solver. The ids therefore depend on the CPU and the library (both are in the device
// fingerprint); an implementation that applies to none of these shapes is not offered.
//
// Threads: oneDNN and convguard share one OpenMP runtime (libgomp), so the probe's thread count
// (OMP_NUM_THREADS, `driver -t`) is oneDNN's too; prepared primitives are cached per count.
#include <omp.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "convguard/plugin.h"
#include "onednn_api.hpp"
#include "onednn_conv.hpp"

namespace convguard_onednn {
namespace {

// Slots for solvers: the ABI's functions carry no solver pointer, so each solver needs its own.
constexpr int kMaxSolvers = 192;

struct Entry {
  int direction = 0;
  Variant variant = Variant::caller;
  std::string impl, id;
};

void say(char* msg, std::size_t len, const std::string& text) {
  if (msg && len) std::snprintf(msg, len, "%s", text.c_str());
}

// One discovery shape: dense strides of NCHW (nhwc false) or NHWC, KCRS or KRSC.
cg_problem shape(int direction, int dtype, bool nhwc, int sp, std::int64_t g, std::int64_t c,
                 std::int64_t k, std::int64_t size, std::int64_t r, std::int64_t stride,
                 std::int64_t dilation) {
  cg_problem p{};
  p.spatial_dims = sp;
  p.g = g, p.n = 2, p.c = c, p.k = k;
  p.direction = direction, p.dtype = dtype;
  const int first = 3 - sp;
  for (int d = 0; d < 3; ++d) {
    const bool on = d >= first;
    p.input[d] = on ? size : 1, p.filter[d] = on ? r : 1, p.stride[d] = on ? stride : 1;
    p.dilation[d] = on ? dilation : 1;
    p.pad_begin[d] = p.pad_end[d] = on ? dilation * (r - 1) / 2 : 0;
  }
  auto dense = [&](std::int64_t* s, std::int64_t a, std::int64_t b, const std::int64_t* sz) {
    // logical order a, b, spatial...; nhwc: b innermost
    std::int64_t spatial = 1;
    for (int i = sp - 1; i >= 0; --i) {
      s[2 + i] = nhwc ? spatial * b : spatial;
      spatial *= sz[first + i];
    }
    s[1] = nhwc ? 1 : spatial;
    s[0] = spatial * b;
    (void)a;
  };
  std::int64_t out[3];
  for (int d = 0; d < 3; ++d)
    out[d] =
        (p.input[d] + 2 * p.pad_begin[d] - p.dilation[d] * (p.filter[d] - 1) - 1) / p.stride[d] + 1;
  dense(p.x_strides, p.n, p.c, p.input);
  dense(p.w_strides, p.k, p.c / p.g, p.filter);
  dense(p.y_strides, p.n, p.k, out);
  return p;
}

std::vector<cg_problem> discovery_shapes() {
  struct S {
    int sp;
    std::int64_t g, c, k, size, r, stride, dilation;
  };
  static constexpr S kShapes[] = {
      {2, 1, 3, 64, 28, 7, 2, 1},   {2, 1, 64, 64, 14, 3, 1, 1}, {2, 1, 64, 256, 14, 1, 1, 1},
      {2, 1, 256, 64, 14, 1, 2, 1}, {2, 1, 16, 32, 14, 3, 2, 1}, {2, 32, 32, 32, 14, 3, 1, 1},
      {2, 4, 32, 32, 14, 3, 1, 1},  {2, 1, 16, 16, 14, 3, 1, 2}, {2, 1, 64, 64, 28, 3, 1, 1},
      {3, 1, 16, 32, 8, 3, 1, 1},   {3, 1, 64, 64, 8, 1, 1, 1},  {3, 16, 16, 16, 8, 3, 1, 1},
  };
  std::vector<cg_problem> v;
  for (int dtype : {0, 2})
    for (bool nhwc : {false, true})
      for (const S& s : kShapes)
        for (int dir = 0; dir < 3; ++dir)
          v.push_back(
              shape(dir, dtype, nhwc, s.sp, s.g, s.c, s.k, s.size, s.r, s.stride, s.dilation));
  return v;
}

const char* direction_name(int d) {
  return d == 0 ? "fwd" : d == 1 ? "bwd_data" : "bwd_weights";
}

const std::vector<Entry>& catalogue() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> found;
    if (!api().lib) return found;
    const std::vector<cg_problem> shapes = discovery_shapes();
    // oneDNN offers some implementations only at some thread counts (jit_fp32_wino_2x3 not at
    // one thread), and a probe's workers may run at fewer threads than the process that lists
    // the solvers (--jobs 2: one each): a solver the parent listed was then missing from the
    // worker, and its 90 trials were recorded `error`. The list is the union over the thread
    // counts a process here runs at; where an implementation does not apply, check() says so.
    const int threads = omp_get_max_threads();
    for (int count : {threads, 1, omp_get_num_procs()}) {
      omp_set_num_threads(count);
      for (int dir = 0; dir < 3; ++dir) {
        for (Variant v : {Variant::caller, Variant::any}) {
          for (const cg_problem& p : shapes) {
            if (p.direction != dir) continue;
            std::string why;
            for (const std::string& impl : offered(p, v, why)) {
              const std::string id = std::string("onednn:") + direction_name(dir) + ":" + impl +
                                     (v == Variant::any ? ":any" : "");
              bool seen = false;
              for (const Entry& e : found) seen = seen || e.id == id;
              if (!seen && found.size() < kMaxSolvers) found.push_back({dir, v, impl, id});
            }
          }
        }
      }
    }
    omp_set_num_threads(threads);
    return found;
  }();
  return entries;
}

// oneDNN's `ref` implementations are its own naive reference: ~30M multiply-adds a second on the
// 2-core build machine (size-64 of the standard suite, 7M: 0.26 s a call; channels-128-256: 23 s),
// so a probe would spend most of its time on a solver that never wins. Above this they decline,
// with the reason; the tests' small problems still verify them.
constexpr double kRefMacLimit = 2e6;

double multiply_adds(const cg_problem& p) {
  double m = static_cast<double>(p.n) * p.k * (p.c / p.g);
  for (int d = 0; d < 3; ++d) {
    const std::int64_t out =
        (p.input[d] + p.pad_begin[d] + p.pad_end[d] - p.dilation[d] * (p.filter[d] - 1) - 1) /
            p.stride[d] +
        1;
    m *= static_cast<double>(out) * p.filter[d];
  }
  return m;
}

int check_entry(int slot, const cg_problem* p, char* msg, std::size_t len) {
  const Entry& e = catalogue()[static_cast<std::size_t>(slot)];
  if (p->direction != e.direction) {
    say(msg, len, std::string("computes ") + direction_name(e.direction) + " only");
    return CG_NOT_APPLICABLE;
  }
  if (e.impl.starts_with("ref") && multiply_adds(*p) > kRefMacLimit) {
    say(msg, len,
        "oneDNN's naive reference implementation: declined above 2e6 multiply-adds (tenths of "
        "a second a call and more)");
    return CG_NOT_APPLICABLE;
  }
  const Prepared& prep = prepare(*p, e.variant, e.impl);
  if (error_of(prep).empty()) return CG_OK;
  say(msg, len, error_of(prep));
  return CG_NOT_APPLICABLE;
}

template <int Slot>
int check(const cg_problem* p, char* msg, std::size_t len) {
  return check_entry(Slot, p, msg, len);
}

template <int Slot>
uint64_t workspace_bytes(const cg_problem* p) {
  const Entry& e = catalogue()[Slot];
  if (p->direction != e.direction) return 0;
  return workspace_of(prepare(*p, e.variant, e.impl));
}

template <int Slot>
int run(const cg_problem* p, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y, void* ws,
        uint64_t ws_bytes, char* msg, std::size_t len) {
  const Entry& e = catalogue()[Slot];
  if (p->direction != e.direction) {
    say(msg, len, std::string("computes ") + direction_name(e.direction) + " only");
    return CG_ERROR;
  }
  return execute(prepare(*p, e.variant, e.impl), x, w, y, ws, ws_bytes, msg, len);
}

template <std::size_t... I>
std::vector<cg_solver> slots(std::index_sequence<I...>) {
  return {cg_solver{nullptr, check<static_cast<int>(I)>, workspace_bytes<static_cast<int>(I)>,
                    run<static_cast<int>(I)>}...};
}

const std::vector<cg_solver>& solvers() {
  static const std::vector<cg_solver> v = [] {
    std::vector<cg_solver> s = slots(std::make_index_sequence<kMaxSolvers>());
    const std::vector<Entry>& entries = catalogue();
    s.resize(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) s[i].id = entries[i].id.c_str();
    return s;
  }();
  return v;
}

int available(char* msg, std::size_t len) {
  if (!api().lib) {
    say(msg, len, api().error);
    return CG_ERROR;
  }
  if (!engine()) {
    say(msg, len, describe_library() + ": no CPU engine");
    return CG_ERROR;
  }
  if (catalogue().empty()) {
    say(msg, len, describe_library() + " offers no convolution implementation on this CPU");
    return CG_ERROR;
  }
  return CG_OK;
}

const char* description() {
  return describe_library().c_str();
}

}  // namespace
}  // namespace convguard_onednn

using namespace convguard_onednn;

extern "C" __attribute__((visibility("default"))) const cg_plugin* convguard_plugin(void) {
  static const cg_plugin plugin = {CONVGUARD_PLUGIN_ABI_VERSION,
                                   "onednn",
                                   available,
                                   solvers().size(),
                                   solvers().data(),
                                   CG_DEVICE_CPU,
                                   description,
                                   nullptr,   // device_api: oneDNN computes on the host
                                   nullptr};  // prepare: primitives are created in run()
  return &plugin;
}
