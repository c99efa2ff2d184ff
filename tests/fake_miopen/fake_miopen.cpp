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
// Everything else follows MIOpen's source (rocm-5.7.0; docs/miopen.md "What MIOpen checks"): only
// *GetSolution(Count) ask IsApplicable(); the workspace query answers 0 unasked for solvers whose
// MayNeedWorkspace() is false; CompileSolution and Immediate run whatever they are given (an
// inapplicable kernel computes garbage); per-solver switches act in IsApplicable(), family switches
// in GetSolution's filter, each variable read once. The simulated system find-db has a record for
// every problem unless FAKE_MIOPEN_SYSTEM_FIND_DB=0 (then the fallback's shorter list applies).
//
// The HIP runtime is libfake_hip (fake_hip.cpp, named libamdhip64.so.5 like the real one), which
// this library links against as the real libMIOpen links libamdhip64. Nothing outside tests
// loads either (CONVGUARD_MIOPEN_PATH points the plugin at this one).
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/reference.hpp"
#include "vendor/miopen_table.hpp"

// Kernels run on the simulated GPU of the fake HIP runtime this library links against
// (fake_hip.cpp), as MIOpen's run on the HIP runtime it links: a planted hang or fault is left
// pending there and acts at the next synchronising call.
extern "C" void fake_hip_launch(int pending);  // 0 fine, 1 never finishes, 2 faults
extern "C" void fake_hip_settle();

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

// The MIOpen release simulated: 2.20.0 (ROCm 5.7), or FAKE_MIOPEN_VERSION ("2.17.0").
convguard::miopen_table::Version version() {
  const char* v = std::getenv("FAKE_MIOPEN_VERSION");
  return convguard::miopen_table::parse_version(v ? v : "")
      .value_or(convguard::miopen_table::Version{2, 20});
}

const convguard::miopen_table::Table& table() {
  static const auto t = [] {
    auto r = convguard::miopen_table::load();
    if (!r) {
      std::fprintf(stderr, "fake MIOpen: %s\n", r.status().message().c_str());
      std::abort();
    }
    return r->for_version(version());  // the release it claims to be (miopenGetVersion)
  }();
  return t;
}

void settle() {
  fake_hip_settle();
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
  if (has(name, "Xdlops")) return false;  // matrix cores (gfx908/90a/94x): none on gfx1010
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

// ---- MIOpen's rules, with its source as the specification (rocm-5.7.0) -------------------
// src/include/miopen/solver.hpp at rocm-5.7.0: the solvers that override MayNeedWorkspace() to
// true. For every other solver *GetSolutionWorkspaceSize returns 0 before IsApplicable() is
// consulted (src/ocl/convolutionocl.cpp:721, 932, 1132).
bool may_need_workspace(const std::string& n) {
  return n == "ConvAsm1x1U" || n == "ConvHipImplicitGemmBwdDataV1R1" ||
         n == "ConvAsmImplicitGemmV4R1DynamicWrw" || has(n, "ConvMPBidirectWinograd") ||
         has(n, "ConvWinograd3x3MultipassWrW") || n == "ConvAsmBwdWrW1x1" ||
         has(n, "ConvOclBwdWrW2") || n == "ConvOclBwdWrW53" || n == "ConvOclBwdWrW1x1" ||
         n == "fft" || (n.rfind("Gemm", 0) == 0 && n != "GemmWrw1x1_stride1");
}
// Same header: IsDynamic() true, and GetWti() overridden (the default is -2, "unknown"). The
// immediate-mode fallback lists only dynamic solvers with a known WTI (convolutionocl.cpp:601).
bool dynamic_with_wti(const std::string& n) {
  return n == "ConvBinWinogradRxSf2x3g1" || has(n, "ConvDirectNaiveConv") ||
         n.rfind("Gemm", 0) == 0;
}

// MIOpen reads each MIOPEN_* variable once, at its first use in the process (env.hpp at
// rocm-5.7.0: a function-local static per variable), so setting one later changes nothing.
const std::string& env_value(const std::string& var) {
  static std::map<std::string, std::string> seen;
  if (auto it = seen.find(var); it != seen.end()) return it->second;
  const char* v = var.empty() ? nullptr : std::getenv(var.c_str());
  std::string s = v ? v : "";
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return seen[var] = s;
}
bool env_disabled(const std::string& var) {
  const std::string& s = env_value(var);
  return s == "0" || s == "no" || s == "false" || s == "disable" || s == "disabled";
}
bool env_enabled(const std::string& var) {
  const std::string& s = env_value(var);
  return s == "1" || s == "yes" || s == "true" || s == "enable" || s == "enabled";
}

// IsApplicable(): the structural rules plus the solver's own MIOPEN_DEBUG_* switch, which real
// solvers test inside IsApplicable() (e.g. src/solver/conv_ocl_dir2D_bwdWrW_2.cpp:452).
bool is_applicable(const convguard::miopen_table::Solver& sol, const Problem& p) {
  // A solver off by default (a WORKAROUND_* guard in IsApplicable()) needs its switch at 1.
  if (!sol.default_on && !env_enabled(sol.switch_name)) return false;
  return sol.runs(p.direction) && applies(sol.name, p) && !env_disabled(sol.switch_name);
}
// IsAlgorithmDisabled() (src/conv/solver_finders.cpp:316): the family switches, which GetSolution
// and Find apply, and IsApplicable() does not.
bool algorithm_disabled(const convguard::miopen_table::Solver& sol) {
  auto it = table().family_switch.find(sol.family);
  return it != table().family_switch.end() && env_disabled(it->second);
}

// The installed (system) find-db. Real ones hold records only for the problems AMD ran Find on;
// the simulated one holds a record for every problem, listing what applied under default
// switches, unless FAKE_MIOPEN_SYSTEM_FIND_DB=0 (then every problem takes the fallback).
std::vector<const convguard::miopen_table::Solver*> find_db_record(const Problem& p) {
  std::vector<const convguard::miopen_table::Solver*> r;
  if (const char* v = std::getenv("FAKE_MIOPEN_SYSTEM_FIND_DB"); v && std::string(v) == "0") {
    return r;
  }
  for (const auto& sol : table().solvers) {
    if (sol.runs(p.direction) && applies(sol.name, p) && sol.default_on) r.push_back(&sol);
  }
  return r;
}

struct Listed {
  int status = 0;
  std::vector<const convguard::miopen_table::Solver*> solvers;
  std::size_t count = 0;  // what *GetSolutionCount answers
};

// *GetSolutionCount / *GetSolution (convolutionocl.cpp:460-710 at rocm-5.7.0): a find-db record is
// counted unfiltered and listed filtered by IsAlgorithmDisabled() and IsApplicable(); an empty
// result takes the fallback, which fails with NotImplemented when it finds nothing.
Listed list_solutions(const Problem& p) {
  Listed l;
  const auto record = find_db_record(p);
  for (const auto* sol : record) {
    if (!algorithm_disabled(*sol) && is_applicable(*sol, p)) l.solvers.push_back(sol);
  }
  l.count = record.size();
  if (!l.solvers.empty()) return l;
  if (env_disabled("MIOPEN_DEBUG_CONV_IMMED_FALLBACK")) {
    l.status = 6;  // miopenStatusNotImplemented
    return l;
  }
  for (const auto& sol : table().solvers) {
    if (dynamic_with_wti(sol.name) && !algorithm_disabled(sol) && is_applicable(sol, p)) {
      l.solvers.push_back(&sol);
    }
  }
  l.count = l.solvers.size();
  if (l.solvers.empty()) l.status = 6;
  return l;
}

// Compiling (rocm-5.7.0 convolutionocl.cpp:131-150): CompileSolution and Immediate go through
// LoadOrPrepareInvoker, which reuses the handle's invoker for (problem, solver) or builds one,
// taking the kernel binaries from the on-disk kernel cache when they are there (its folder is
// MIOPEN_CUSTOM_CACHE_DIR, read once: binary_cache.cpp:68, cached at :97). A build takes
// FAKE_MIOPEN_COMPILE_MS (default 0) and appends "compile <solver> <key>" to
// FAKE_MIOPEN_COMPILE_LOG when set, so tests can count real compiles; without a cache folder every
// process builds again.
const std::string& cache_dir() {
  static const std::string dir = [] {
    const char* v = std::getenv("MIOPEN_CUSTOM_CACHE_DIR");
    return std::string(v ? v : "");
  }();
  return dir;
}

void compile(const convguard::miopen_table::Solver& sol, const Problem& p) {
  static std::set<std::string> invokers;  // the handle's
  char key[32];
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : convguard::identity_string(p)) h = (h ^ c) * 1099511628211ull;
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
  const std::string name = sol.name + "-" + key;
  if (!invokers.insert(name).second) return;
  const std::string binary = cache_dir().empty() ? "" : cache_dir() + "/" + name + ".hsaco";
  if (!binary.empty() && access(binary.c_str(), R_OK) == 0) return;
  if (const char* ms = std::getenv("FAKE_MIOPEN_COMPILE_MS")) usleep(1000u * std::atoi(ms));
  if (const char* log = std::getenv("FAKE_MIOPEN_COMPILE_LOG"); log && *log) {
    const std::string line = "compile " + name + "\n";
    const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) (void)!write(fd, line.data(), line.size()), close(fd);
  }
  if (binary.empty()) return;
  const std::string tmp =
      binary + "." + std::to_string(getpid());  // renamed whole: workers share it
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fputs(name.c_str(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), binary.c_str());
  }
}

// What a kernel leaves when it runs on a problem it was not written for: numbers, not an error.
void write_garbage(const Problem& p, const convguard::ConvTensors& t, std::uint64_t id) {
  const convguard::TensorView& out = convguard::output_of(p, t);
  const std::int64_t n = out.desc.elements();
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ id;
  for (std::int64_t i = 0; i < n; ++i) {
    h ^= h << 13, h ^= h >> 7, h ^= h << 17;
    convguard::store_from_float(out.data, i, out.desc.dtype,
                                static_cast<float>(h % 2001) / 100.0f - 10.0f);
  }
}

int run(Direction dir, const Tensor& xd, void* x, const Tensor& wd, void* w, const Tensor& yd,
        void* y, const Conv& c, std::uint64_t id) {
  settle();
  const auto* sol = table().find(id);
  if (!sol) return 3;  // miopenStatusBadParm
  Problem p = problem_of(dir, xd, wd, c);
  compile(*sol, p);  // Immediate prepares the invoker too when it has none
  set_strides(p, xd, wd, yd);
  const convguard::ConvTensors t{
      {x, convguard::x_desc(p)}, {w, convguard::w_desc(p)}, {y, convguard::y_desc(p)}};
  // Immediate mode asks no one whether the solution applies (convolutionocl.cpp:743 at
  // rocm-5.7.0), and the per-solver switches act only in IsApplicable(): whatever it is given
  // runs. Where the kernel does not fit the problem it computes garbage.
  if (!sol->runs(dir) || !applies(sol->name, p)) {
    write_garbage(p, t, id);
    return 0;
  }
  if (sol->name == "GemmBwdRest" || has(sol->name, "ConvOclBwdWrW2")) {
    fake_hip_launch(2);
    return 0;
  }
  if (has(sol->name, "Gemm") && !has(sol->name, "Implicit") && !has(sol->name, "Igemm") &&
      (p.input[1] > 42 || p.input[2] > 42)) {
    fake_hip_launch(1);
    return 0;
  }
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

// *GetSolutionWorkspaceSize: 0 and success for a solver that may not need a workspace, whether
// or not it applies; only the others are asked IsApplicable() (BadParm when it says no).
int workspace(Direction dir, const Tensor& xd, const Tensor& wd, const Conv& c, std::uint64_t id,
              std::size_t* bytes) {
  const auto* sol = table().find(id);
  if (!sol) return 3;
  if (!may_need_workspace(sol->name)) {
    *bytes = 0;
    return 0;
  }
  const Problem p = problem_of(dir, xd, wd, c);
  if (!is_applicable(*sol, p)) return 3;
  *bytes = workspace_of(sol->name, p);
  return 0;
}

struct Solution {  // miopenConvSolution_t
  float time;
  std::size_t workspace_size;
  std::uint64_t solution_id;
  int algorithm;
};

int compile_solution(Direction dir, const Tensor& xd, const Tensor& wd, const Conv& c,
                     std::uint64_t id) {
  const auto* sol = table().find(id);
  if (!sol) return 3;  // no IsApplicable(): whatever it is given is built
  compile(*sol, problem_of(dir, xd, wd, c));
  return 0;
}

int algorithm_of(const std::string& family) {  // miopenConvAlgorithm_t
  return family == "gemm"       ? 0
         : family == "direct"   ? 1
         : family == "fft"      ? 2
         : family == "winograd" ? 3
                                : 5;
}

int count_solutions(Direction dir, const Tensor& xd, const Tensor& wd, const Conv& c,
                    std::size_t* n) {
  const Listed l = list_solutions(problem_of(dir, xd, wd, c));
  if (l.status != 0) return l.status;
  *n = l.count;
  return 0;
}

int get_solutions(Direction dir, const Tensor& xd, const Tensor& wd, const Conv& c, std::size_t max,
                  std::size_t* n, Solution* out) {
  if (!n || !out) return 3;  // 5.2 checks both; later releases too
  const Problem p = problem_of(dir, xd, wd, c);
  const Listed l = list_solutions(p);
  if (l.status != 0) return l.status;
  *n = 0;
  for (const auto* sol : l.solvers) {
    if (*n >= max) break;
    out[(*n)++] = Solution{-1.0f, workspace_of(sol->name, p), sol->id, algorithm_of(sol->family)};
  }
  return 0;
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

// ---- MIOpen ---------------------------------------------------------------------------
EXPORT int miopenGetVersion(std::size_t* a, std::size_t* b, std::size_t* c) {
  *a = static_cast<std::size_t>(version().major), *b = static_cast<std::size_t>(version().minor);
  *c = 0;
  return 0;
}
EXPORT const char* miopenGetErrorString(int s) {
  return s == 0   ? "miopenStatusSuccess"
         : s == 3 ? "miopenStatusBadParm"
         : s == 6 ? "miopenStatusNotImplemented"
                  : "miopenStatusError";
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
// Count and list, per direction, with the descriptors in the order *GetSolutionWorkspaceSize takes.
EXPORT int miopenConvolutionForwardGetSolutionCount(void*, void* w, void* x, void* c, void*,
                                                    std::size_t* n) {
  return count_solutions(Direction::forward, T(x), T(w), C(c), n);
}
EXPORT int miopenConvolutionForwardGetSolution(void*, void* w, void* x, void* c, void*,
                                               std::size_t max, std::size_t* n, Solution* s) {
  return get_solutions(Direction::forward, T(x), T(w), C(c), max, n, s);
}
EXPORT int miopenConvolutionBackwardDataGetSolutionCount(void*, void*, void* w, void* c, void* dx,
                                                         std::size_t* n) {
  return count_solutions(Direction::backward_data, T(dx), T(w), C(c), n);
}
EXPORT int miopenConvolutionBackwardDataGetSolution(void*, void*, void* w, void* c, void* dx,
                                                    std::size_t max, std::size_t* n, Solution* s) {
  return get_solutions(Direction::backward_data, T(dx), T(w), C(c), max, n, s);
}
EXPORT int miopenConvolutionBackwardWeightsGetSolutionCount(void*, void*, void* x, void* c,
                                                            void* dw, std::size_t* n) {
  return count_solutions(Direction::backward_weights, T(x), T(dw), C(c), n);
}
EXPORT int miopenConvolutionBackwardWeightsGetSolution(void*, void*, void* x, void* c, void* dw,
                                                       std::size_t max, std::size_t* n,
                                                       Solution* s) {
  return get_solutions(Direction::backward_weights, T(x), T(dw), C(c), max, n, s);
}
// Forward: (w, x) -> y.
EXPORT int miopenConvolutionForwardGetSolutionWorkspaceSize(void*, void* w, void* x, void* c, void*,
                                                            std::uint64_t id, std::size_t* n) {
  return workspace(Direction::forward, T(x), T(w), C(c), id, n);
}
EXPORT int miopenConvolutionForwardCompileSolution(void*, void* w, void* x, void* c, void*,
                                                   std::uint64_t id) {
  return compile_solution(Direction::forward, T(x), T(w), C(c), id);
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
EXPORT int miopenConvolutionBackwardDataCompileSolution(void*, void*, void* w, void* c, void* dx,
                                                        std::uint64_t id) {
  return compile_solution(Direction::backward_data, T(dx), T(w), C(c), id);
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
EXPORT int miopenConvolutionBackwardWeightsCompileSolution(void*, void*, void* x, void* c, void* dw,
                                                           std::uint64_t id) {
  return compile_solution(Direction::backward_weights, T(x), T(dw), C(c), id);
}
EXPORT int miopenConvolutionBackwardWeightsImmediate(void*, void* dyd, const void* dy, void* xd,
                                                     const void* x, void* c, void* dwd, void* dw,
                                                     void*, std::size_t, std::uint64_t id) {
  return run(Direction::backward_weights, T(xd), const_cast<void*>(x), T(dwd), dw, T(dyd),
             const_cast<void*>(dy), C(c), id);
}
