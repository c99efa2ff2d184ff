// A simulated MIOpen + HIP runtime, for tests only: the subset of both C APIs that convguard's
// MIOpen plugin calls, computing on the CPU with convguard's fp64 reference, and reproducing the
// seeds' failures on an RX 5600 XT (gfx1010) so the real plugin can be proven end to end here:
//
//   - every GEMM solver hangs when the input is larger than 42x42 (seeds 002 and 004): the kernel
//     never finishes, so the next synchronising call blocks forever;
//   - GemmBwdRest and ConvOclBwdWrW2<n> fault like seed 003 ("Memory access fault by GPU node-1
//     ... Page not present") and abort the process, as the ROCm runtime does;
//   - ConvOclBwdWrW53 returns wrong values (seed 003);
//   - implicit-GEMM, Winograd, naive and the other solvers work where they apply.
//
// The device calls itself "gfx1010 (simulated)". Device memory is host memory. Nothing outside
// tests loads this library (CONVGUARD_MIOPEN_PATH / CONVGUARD_HIP_PATH point the plugin at it).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "convguard/reference.hpp"
#include "vendor/miopen_table.hpp"

namespace {

using convguard::Direction;
using convguard::Problem;

struct Tensor {
  int dtype = 1, rank = 0;
  int dims[5] = {}, strides[5] = {};
};
struct Conv {
  int spatial = 2, groups = 1;
  int pad[3] = {}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
};

const convguard::miopen_table::Table& table() {
  static const auto t = [] {
    auto r = convguard::miopen_table::load();
    if (!r) {
      std::fprintf(stderr, "fake MIOpen: %s\n", r.status().message().c_str());
      std::abort();
    }
    return *r;
  }();
  return t;
}

// What the last "kernel" left behind: the next synchronising call acts on it.
enum class Pending { none, hang, fault };
Pending g_pending = Pending::none;

void settle() {
  if (g_pending == Pending::hang) {
    for (;;) pause();  // the GPU never finishes; the host waits forever
  }
  if (g_pending == Pending::fault) {
    std::fprintf(stderr,
                 "Memory access fault by GPU node-1 (Agent handle: 0x55d4c8a0e2f0) on address "
                 "0x7f3a1c000000. Reason: Page not present or supervisor privilege.\n");
    std::fflush(stderr);
    std::abort();
  }
}

convguard::DType dtype_of(int miopen) {
  return miopen == 0   ? convguard::DType::f16
         : miopen == 5 ? convguard::DType::bf16
                       : convguard::DType::f32;
}

// The convguard problem the descriptors describe (strides taken as given).
Problem problem_of(Direction dir, const Tensor& x, const Tensor& w, const Conv& c) {
  Problem p;
  p.direction = dir;
  p.spatial_dims = c.spatial;
  p.dtype = dtype_of(x.dtype);
  p.n = x.dims[0];
  p.c = x.dims[1];
  p.k = w.dims[0];
  p.g = c.groups;
  const int first = 3 - c.spatial;
  for (int i = 0; i < c.spatial; ++i) {
    p.input[first + i] = x.dims[2 + i];
    p.filter[first + i] = w.dims[2 + i];
    p.stride[first + i] = c.stride[i];
    p.dilation[first + i] = c.dil[i];
    p.pad_begin[first + i] = p.pad_end[first + i] = c.pad[i];
  }
  return p;
}

void set_strides(Problem& p, const Tensor& x, const Tensor& w, const Tensor& y) {
  p.x_strides.assign(x.strides, x.strides + x.rank);
  p.w_strides.assign(w.strides, w.strides + w.rank);
  p.y_strides.assign(y.strides, y.strides + y.rank);
}

bool has(const std::string& name, const char* part) {
  return name.find(part) != std::string::npos;
}

// Where each simulated solver applies (a plausible subset of MIOpen's rules).
bool applies(const std::string& name, const Problem& p) {
  const bool is2d = p.spatial_dims == 2;
  const bool f1x1 = p.filter[1] == 1 && p.filter[2] == 1;
  const bool f3x3 = p.filter[1] == 3 && p.filter[2] == 3;
  const bool unit =
      p.stride[1] == 1 && p.stride[2] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
  if (has(name, "Naive")) return true;
  if (has(name, "Gemm") && !has(name, "Implicit") && !has(name, "Igemm")) {
    if (has(name, "1x1")) return f1x1 && (has(name, "stride2") ? p.stride[2] == 2 : unit);
    return true;  // Rest, Universal
  }
  if (!is2d) return false;
  if (has(name, "Winograd") || has(name, "WinoRxS")) return f3x3 && unit && p.g == 1;
  if (name == "fft") return unit && p.g == 1;
  if (has(name, "1x1")) return f1x1;
  if (has(name, "3x3")) return f3x3 && unit;
  if (has(name, "5x10") || has(name, "7x7") || has(name, "11x11")) return false;
  return true;
}

std::size_t workspace_of(const std::string& name, const Problem& p) {
  if (!has(name, "Gemm") || has(name, "Implicit") || has(name, "Igemm")) return 0;
  const auto o = p.output_dims();
  return static_cast<std::size_t>(p.c * p.taps() * o[0] * o[1] * o[2]) * 4;
}

int run(Direction dir, const Tensor& xd, void* x, const Tensor& wd, void* w, const Tensor& yd,
        void* y, const Conv& c, std::uint64_t id) {
  settle();
  const auto* sol = table().find(id);
  if (!sol) return 3;  // miopenStatusBadParm
  Problem p = problem_of(dir, xd, wd, c);
  set_strides(p, xd, wd, yd);
  // Immediate mode does not re-check applicability of zero-workspace solutions: a solver run
  // where it does not apply writes nothing (the caller's poisoned output stays NaN).
  if (!sol->runs(dir) || !applies(sol->name, p)) return 0;
  if (sol->name == "GemmBwdRest" || has(sol->name, "ConvOclBwdWrW2")) {
    g_pending = Pending::fault;
    return 0;
  }
  if (has(sol->name, "Gemm") && !has(sol->name, "Implicit") && !has(sol->name, "Igemm") &&
      (p.input[1] > 42 || p.input[2] > 42)) {
    g_pending = Pending::hang;
    return 0;
  }
  const convguard::ConvTensors t{
      {x, convguard::x_desc(p)}, {w, convguard::w_desc(p)}, {y, convguard::y_desc(p)}};
  if (!convguard::reference_conv(p, t).is_ok()) return 5;  // miopenStatusInternalError
  if (sol->name == "ConvOclBwdWrW53") {  // every third weight gradient off by a quarter
    const convguard::TensorView& out = convguard::output_of(p, t);
    const std::int64_t n = out.desc.elements();
    const convguard::DType dt = out.desc.dtype;
    for (std::int64_t i = 0; i < n; i += 3) {
      convguard::store_from_float(out.data, i, dt,
                                  1.25f * convguard::load_as_float(out.data, i, dt));
    }
  }
  return 0;
}

int workspace(Direction dir, const Tensor& xd, const Tensor& wd, const Conv& c, std::uint64_t id,
              std::size_t* bytes) {
  const auto* sol = table().find(id);
  if (!sol) return 3;
  const Problem p = problem_of(dir, xd, wd, c);
  if (!sol->runs(dir) || !applies(sol->name, p)) return 3;  // "not applicable": BadParm
  *bytes = workspace_of(sol->name, p);
  return 0;
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

// ---- HIP runtime ----------------------------------------------------------------------
EXPORT int hipGetDeviceCount(int* n) {
  *n = 1;
  return 0;
}
EXPORT int hipSetDevice(int d) {
  return d == 0 ? 0 : 101;  // hipErrorInvalidDevice
}
EXPORT int hipMalloc(void** p, std::size_t n) {
  *p = std::malloc(n ? n : 1);
  return *p ? 0 : 2;  // hipErrorOutOfMemory
}
EXPORT int hipFree(void* p) {
  std::free(p);
  return 0;
}
EXPORT int hipMemcpy(void* d, const void* s, std::size_t n, int) {
  settle();
  std::memcpy(d, s, n);
  return 0;
}
EXPORT int hipMemset(void* d, int v, std::size_t n) {
  settle();
  std::memset(d, v, n);
  return 0;
}
EXPORT int hipDeviceSynchronize() {
  settle();
  return 0;
}
EXPORT int hipGetLastError() {
  return 0;
}
EXPORT const char* hipGetErrorString(int e) {
  return e == 0 ? "no error" : "simulated error";
}
EXPORT int hipRuntimeGetVersion(int* v) {
  *v = 50731921;  // ROCm 5.7
  return 0;
}
EXPORT int hipDriverGetVersion(int* v) {
  *v = 50731921;
  return 0;
}
EXPORT int hipDeviceGetAttribute(int* v, int attr, int) {
  *v = attr == 63 ? 36 : 0;  // multiprocessors: an RX 5600 XT has 36 CUs
  return 0;
}
EXPORT int hipGetDevicePropertiesR0600(void* prop, int) {
  std::snprintf(static_cast<char*>(prop), 256, "AMD Radeon RX 5600 XT (simulated)");
  std::snprintf(static_cast<char*>(prop) + 1160, 256, "gfx1010 (simulated)");
  return 0;
}

// ---- MIOpen ---------------------------------------------------------------------------
EXPORT int miopenGetVersion(std::size_t* a, std::size_t* b, std::size_t* c) {
  *a = 2, *b = 20, *c = 0;
  return 0;
}
EXPORT const char* miopenGetErrorString(int s) {
  return s == 0 ? "miopenStatusSuccess" : s == 3 ? "miopenStatusBadParm" : "miopenStatusError";
}
EXPORT int miopenCreate(void** h) {
  static int handle;
  *h = &handle;
  return 0;
}
EXPORT int miopenCreateTensorDescriptor(void** d) {
  *d = new Tensor;
  return 0;
}
EXPORT int miopenSetTensorDescriptor(void* d, int dtype, int rank, const int* dims,
                                     const int* strides) {
  auto* t = static_cast<Tensor*>(d);
  if (rank < 3 || rank > 5) return 3;
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; ++i) t->dims[i] = dims[i], t->strides[i] = strides[i];
  return 0;
}
EXPORT int miopenDestroyTensorDescriptor(void* d) {
  delete static_cast<Tensor*>(d);
  return 0;
}
EXPORT int miopenCreateConvolutionDescriptor(void** d) {
  *d = new Conv;
  return 0;
}
EXPORT int miopenInitConvolutionNdDescriptor(void* d, int spatial, const int* pad,
                                             const int* stride, const int* dil, int mode) {
  auto* c = static_cast<Conv*>(d);
  if (mode != 0 || spatial < 2 || spatial > 3) return 3;
  c->spatial = spatial;
  for (int i = 0; i < spatial; ++i)
    c->pad[i] = pad[i], c->stride[i] = stride[i], c->dil[i] = dil[i];
  return 0;
}
EXPORT int miopenSetConvolutionGroupCount(void* d, int g) {
  static_cast<Conv*>(d)->groups = g;
  return 0;
}
EXPORT int miopenDestroyConvolutionDescriptor(void* d) {
  delete static_cast<Conv*>(d);
  return 0;
}

#define T(p) (*static_cast<const Tensor*>(p))
#define C(p) (*static_cast<const Conv*>(p))
// Forward: (w, x) -> y.
EXPORT int miopenConvolutionForwardGetSolutionWorkspaceSize(void*, void* w, void* x, void* c, void*,
                                                            std::uint64_t id, std::size_t* n) {
  return workspace(Direction::forward, T(x), T(w), C(c), id, n);
}
EXPORT int miopenConvolutionForwardCompileSolution(void*, void*, void*, void*, void*,
                                                   std::uint64_t) {
  return 0;
}
EXPORT int miopenConvolutionForwardImmediate(void*, void* wd, const void* w, void* xd,
                                             const void* x, void* c, void* yd, void* y, void*,
                                             std::size_t, std::uint64_t id) {
  return run(Direction::forward, T(xd), const_cast<void*>(x), T(wd), const_cast<void*>(w), T(yd), y,
             C(c), id);
}
// Backward-data: (dy, w) -> dx.
EXPORT int miopenConvolutionBackwardDataGetSolutionWorkspaceSize(void*, void*, void* w, void* c,
                                                                 void* dx, std::uint64_t id,
                                                                 std::size_t* n) {
  return workspace(Direction::backward_data, T(dx), T(w), C(c), id, n);
}
EXPORT int miopenConvolutionBackwardDataCompileSolution(void*, void*, void*, void*, void*,
                                                        std::uint64_t) {
  return 0;
}
EXPORT int miopenConvolutionBackwardDataImmediate(void*, void* dyd, const void* dy, void* wd,
                                                  const void* w, void* c, void* dxd, void* dx,
                                                  void*, std::size_t, std::uint64_t id) {
  return run(Direction::backward_data, T(dxd), dx, T(wd), const_cast<void*>(w), T(dyd),
             const_cast<void*>(dy), C(c), id);
}
// Backward-weights: (dy, x) -> dw.
EXPORT int miopenConvolutionBackwardWeightsGetSolutionWorkspaceSize(void*, void*, void* x, void* c,
                                                                    void* dw, std::uint64_t id,
                                                                    std::size_t* n) {
  return workspace(Direction::backward_weights, T(x), T(dw), C(c), id, n);
}
EXPORT int miopenConvolutionBackwardWeightsCompileSolution(void*, void*, void*, void*, void*,
                                                           std::uint64_t) {
  return 0;
}
EXPORT int miopenConvolutionBackwardWeightsImmediate(void*, void* dyd, const void* dy, void* xd,
                                                     const void* x, void* c, void* dwd, void* dw,
                                                     void*, std::size_t, std::uint64_t id) {
  return run(Direction::backward_weights, T(xd), const_cast<void*>(x), T(dwd), dw, T(dyd),
             const_cast<void*>(dy), C(c), id);
}
