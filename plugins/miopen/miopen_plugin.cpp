// convguard's MIOpen plugin: every MIOpen convolution solver of data/miopen/solvers.tsv as one
// convguard solver ("miopen:<SolverName>"), run through MIOpen's immediate-mode C API on an AMD
// GPU that the plugin drives itself (plugin ABI 3 device "hip:N", through the HIP runtime).
//
// Why immediate mode: Find runs every candidate inside the caller's process; here each solver is
// one sandboxed trial. Applicability is MIOpen's own: a solver applies when
// miopenConvolution*GetSolution lists it for the problem, the one immediate-mode call that asks
// IsApplicable() (of the find-db record's solvers, or without a record of the dynamic solvers with
// a WTI estimate). *GetSolutionWorkspaceSize answers 0 without asking for solvers that need no
// workspace, and *CompileSolution / *Immediate never ask: a solver MIOpen does not list is never
// run. Without an open device (a parent listing solvers) check() applies the static rules only.
//
// Each worker session gets its own MIOPEN_USER_DB_PATH (a temporary folder removed at exit), so
// probing never reads or pollutes the user's MIOpen databases; its MIOPEN_CUSTOM_CACHE_DIR is the
// kernel cache shared by this user's workers on the device (miopen_env.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "convguard/plugin.h"
#include "miopen_api.hpp"
#include "miopen_env.hpp"
#include "vendor/miopen_table.hpp"

namespace convguard_miopen {
namespace {

using convguard::miopen_table::Table;

constexpr std::size_t kMaxSolvers = 128;

struct Session {
  const Api* api = nullptr;
  std::string why;  // why the plugin is unavailable
  Table table;
  Handle handle = nullptr;  // set by device open()
  std::string temp_dir;
  std::string describe;  // "MIOpen 2.20.0 (path), HIP runtime ... (path)"
};

Session& session() {
  static Session s;
  static bool loaded = false;
  if (!loaded) {
    loaded = true;
    s.api = load_api(s.why);
    auto t = convguard::miopen_table::load();
    if (!t) {
      s.why = t.status().message();
      s.api = nullptr;
    } else {
      s.table = std::move(*t);  // without MIOpen: the newest rows, for listing
    }
    if (s.api) {
      std::size_t ma = 0, mi = 0, pa = 0;
      s.api->miopenGetVersion(&ma, &mi, &pa);
      s.describe = fmt::format("MIOpen {}.{}.{} ({}, linking HIP {})", ma, mi, pa,
                               s.api->miopen_path, s.api->hip_path);
      // The rows of this MIOpen only: solvers it does not register are not offered, and each
      // switch's default is this version's (data/miopen/solvers.tsv, VERSIONS and DEFAULT).
      s.table = s.table.for_version({static_cast<int>(ma), static_cast<int>(mi)});
      if (s.table.solvers.empty()) {
        s.why = fmt::format(
            "MIOpen {}.{}.{} ({}) is outside every version data/miopen/solvers.tsv was checked "
            "against (from 2.17, ROCm 5.2)",
            ma, mi, pa, s.api->miopen_path);
        s.api = nullptr;
      }
    }
    if (s.table.solvers.size() > kMaxSolvers) s.table.solvers.resize(kMaxSolvers);
  }
  return s;
}

void say(char* buf, std::size_t len, const std::string& m) {
  if (len) std::snprintf(buf, len, "%s", m.c_str());
}

std::string hip_error(int e) {
  const Api* a = session().api;
  return fmt::format("hipError {} ({})", e,
                     a && a->hipGetErrorString ? a->hipGetErrorString(e) : "?");
}

// A HIP result as a plugin return code: faults that poison the context are CG_DEVICE_LOST.
int hip_rc(int e, const char* what, char* msg, std::size_t len) {
  if (e == kHipSuccess) return CG_OK;
  say(msg, len, std::string(what) + ": " + hip_error(e));
  if (e == kHipErrorOutOfMemory) return CG_OUT_OF_MEMORY;
  if (e == kHipErrorIllegalAddress || e == kHipErrorLaunchFailure) return CG_DEVICE_LOST;
  return CG_ERROR;
}

std::string miopen_error(int s) {
  const Api* a = session().api;
  return fmt::format("miopenStatus {} ({})", s, a ? a->miopenGetErrorString(s) : "?");
}

// ---- the device (plugin ABI 3) --------------------------------------------------------

int device_count() {
  Session& s = session();
  int n = 0;
  return s.api && s.api->hipGetDeviceCount(&n) == kHipSuccess ? n : 0;
}

void remove_temp_dir() {
  remove_worker_dir(session().temp_dir);
}

int device_open(int index, char* desc, std::size_t dlen, char* fp, std::size_t flen) {
  Session& s = session();
  if (!s.api) {
    say(desc, dlen, s.why);
    return CG_ERROR;
  }
  if (int e = s.api->hipSetDevice(index); e != kHipSuccess) {
    return hip_rc(e, "hipSetDevice", desc, dlen);
  }
  alignas(8) static char props[4096];
  std::memset(props, 0, sizeof props);
  std::size_t arch_at = kGcnArchNameOffsetR0600;
  int e = s.api->hipGetDevicePropertiesR0600
              ? s.api->hipGetDevicePropertiesR0600(props, index)
              : (arch_at = kGcnArchNameOffsetR0000, s.api->hipGetDeviceProperties(props, index));
  if (e != kHipSuccess) return hip_rc(e, "hipGetDeviceProperties", desc, dlen);
  const std::string name(props, strnlen(props, 256));
  const std::string arch(props + arch_at, strnlen(props + arch_at, 256));
  int cus = 0, runtime = 0, driver = 0;
  (void)s.api->hipDeviceGetAttribute(&cus, kHipDeviceAttributeMultiprocessorCount, index);
  (void)s.api->hipRuntimeGetVersion(&runtime);
  (void)s.api->hipDriverGetVersion(&driver);
  const char* override_gfx = std::getenv("HSA_OVERRIDE_GFX_VERSION");
  const std::string override_note =
      override_gfx ? fmt::format(", HSA_OVERRIDE_GFX_VERSION={}", override_gfx) : "";
  // The MIOPEN_* set this worker runs under (the probe withholds the user's unless told to
  // inherit them): part of the fingerprint, so evidence taken under a user's switches is recorded
  // with them and never reused for, or overwrites, evidence taken without.
  const std::string env = miopen_environment();
  const std::string fingerprint =
      fmt::format("hip|{}|{}|cus={}|runtime={}|driver={}|{}{}|MIOPEN_*: {}", name, arch, cus,
                  runtime, driver, s.describe, override_note, env.empty() ? "none" : env);
  // Private user databases for this worker, and the kernel cache this device's workers share
  // (set before the handle exists: MIOpen reads both once, binary_cache.cpp / db_path.cpp.in).
  if (s.temp_dir.empty()) {
    s.temp_dir = make_worker_dir();
    if (s.temp_dir.empty()) {
      say(desc, dlen, "cannot create a temporary folder for MIOpen's databases");
      return CG_ERROR;
    }
    std::atexit(remove_temp_dir);
    std::string cache = kernel_cache_dir(fingerprint);
    if (cache.empty()) cache = s.temp_dir + "/cache";
    setenv("MIOPEN_USER_DB_PATH", (s.temp_dir + "/db").c_str(), 1);
    setenv("MIOPEN_CUSTOM_CACHE_DIR", cache.c_str(), 1);
  }
  if (!s.handle) {
    if (int st = s.api->miopenCreate(&s.handle); st != kMiopenSuccess) {
      s.handle = nullptr;
      say(desc, dlen, "miopenCreate: " + miopen_error(st));
      return CG_ERROR;
    }
  }
  say(desc, dlen,
      fmt::format("hip:{}: {} ({}, {} CUs{}), HIP runtime {}, driver {}, {}, {}", index, name, arch,
                  cus, override_note, runtime, driver, s.describe,
                  env.empty() ? "no MIOPEN_* variables" : "MIOPEN_* inherited: " + env));
  say(fp, flen, fingerprint);
  return CG_OK;
}

int device_alloc(void** p, std::uint64_t bytes, char* msg, std::size_t len) {
  return hip_rc(session().api->hipMalloc(p, bytes), "hipMalloc", msg, len);
}
void device_release(void* p) {
  (void)session().api->hipFree(p);
}
int device_copy(void* dst, const void* src, std::uint64_t bytes, int to_device, char* msg,
                std::size_t len) {
  const int kind = to_device ? kHipMemcpyHostToDevice : kHipMemcpyDeviceToHost;
  return hip_rc(session().api->hipMemcpy(dst, src, bytes, kind), "hipMemcpy", msg, len);
}
int device_fill(void* p, int value, std::uint64_t bytes, char* msg, std::size_t len) {
  return hip_rc(session().api->hipMemset(p, value, bytes), "hipMemset", msg, len);
}
int device_sync(char* msg, std::size_t len) {
  return hip_rc(session().api->hipDeviceSynchronize(), "hipDeviceSynchronize", msg, len);
}

const cg_device_api kDevice = {"hip",          device_count, device_open, device_alloc,
                               device_release, device_copy,  device_fill, device_sync};

// ---- solvers --------------------------------------------------------------------------

int dtype_of(int cg_dtype) {
  return cg_dtype == 1 ? kMiopenHalf : cg_dtype == 2 ? kMiopenBFloat16 : kMiopenFloat;
}

// Dense NCHW or NHWC (NCDHW/NDHWC) strides: the layouts MIOpen takes.
bool packed(const std::int64_t* dims, const std::int64_t* strides, int rank) {
  auto dense = [&](const std::vector<int>& order) {  // innermost first
    std::int64_t expect = 1;
    for (int i : order) {
      if (dims[i] > 1 && strides[i] != expect) return false;
      expect *= dims[i];
    }
    return true;
  };
  std::vector<int> nchw, nhwc{1};
  for (int i = rank - 1; i >= 0; --i) nchw.push_back(i);
  for (int i = rank - 1; i >= 2; --i) nhwc.push_back(i);
  nhwc.push_back(0);
  return dense(nchw) || dense(nhwc);
}

struct Descriptors {
  TensorDesc x = nullptr, w = nullptr, y = nullptr;
  ConvDesc conv = nullptr;
  ~Descriptors() {
    const Api* a = session().api;
    for (TensorDesc t : {x, w, y}) {
      if (t) a->miopenDestroyTensorDescriptor(t);
    }
    if (conv) a->miopenDestroyConvolutionDescriptor(conv);
  }
};

// The problem's descriptors; false with a message when MIOpen cannot express it.
bool describe(const cg_problem* p, Descriptors& d, std::string& why) {
  const Api* a = session().api;
  const int rank = p->spatial_dims + 2, first = 3 - p->spatial_dims;
  std::int64_t xd[5] = {p->n, p->c}, wd[5] = {p->k, p->c / p->g}, yd[5] = {p->n, p->k};
  int pad[3], stride[3], dil[3];
  for (int i = 0; i < p->spatial_dims; ++i) {
    const int s = first + i;
    xd[2 + i] = p->input[s];
    wd[2 + i] = p->filter[s];
    const std::int64_t span = (p->filter[s] - 1) * p->dilation[s] + 1;
    yd[2 + i] = (p->input[s] + p->pad_begin[s] + p->pad_end[s] - span) / p->stride[s] + 1;
    if (p->pad_begin[s] != p->pad_end[s]) {
      why = "MIOpen pads symmetrically (pad_begin == pad_end); this problem does not";
      return false;
    }
    pad[i] = static_cast<int>(p->pad_begin[s]);
    stride[i] = static_cast<int>(p->stride[s]);
    dil[i] = static_cast<int>(p->dilation[s]);
  }
  struct T {
    TensorDesc* d;
    const std::int64_t* dims;
    const std::int64_t* strides;
    const char* name;
  };
  for (const T& t : {T{&d.x, xd, p->x_strides, "x"}, T{&d.w, wd, p->w_strides, "w"},
                     T{&d.y, yd, p->y_strides, "y"}}) {
    if (!packed(t.dims, t.strides, rank)) {
      why = fmt::format("MIOpen takes dense NCHW or NHWC tensors; {} has other strides", t.name);
      return false;
    }
    int dims[5], strides[5];
    for (int i = 0; i < rank; ++i) {
      dims[i] = static_cast<int>(t.dims[i]);
      strides[i] = static_cast<int>(t.strides[i]);
    }
    if (a->miopenCreateTensorDescriptor(t.d) != kMiopenSuccess ||
        a->miopenSetTensorDescriptor(*t.d, dtype_of(p->dtype), rank, dims, strides) !=
            kMiopenSuccess) {
      why = fmt::format("MIOpen refused the {} tensor descriptor", t.name);
      return false;
    }
  }
  if (a->miopenCreateConvolutionDescriptor(&d.conv) != kMiopenSuccess ||
      a->miopenInitConvolutionNdDescriptor(d.conv, p->spatial_dims, pad, stride, dil,
                                           kMiopenConvolution) != kMiopenSuccess ||
      a->miopenSetConvolutionGroupCount(d.conv, static_cast<int>(p->g)) != kMiopenSuccess) {
    why = "MIOpen refused the convolution descriptor";
    return false;
  }
  return true;
}

// The descriptors in the order each direction's calls take them: (a, b) -> out.
void direction_order(const Descriptors& d, int dir, TensorDesc& a, TensorDesc& b, TensorDesc& o) {
  if (dir == 0) {
    a = d.w, b = d.x, o = d.y;  // forward: (w, x) -> y
  } else if (dir == 1) {
    a = d.y, b = d.w, o = d.x;  // backward-data: (dy, w) -> dx
  } else {
    a = d.y, b = d.x, o = d.w;  // backward-weights: (dy, x) -> dw
  }
}

const char* kDirectionNames[3] = {"forward", "backward-data", "backward-weights"};
const char* kApiDirections[3] = {"Forward", "BackwardData", "BackwardWeights"};

// What MIOpen's *GetSolution listed for one problem: the only immediate-mode call that asks every
// solver's IsApplicable() (from the find-db record, or without one from its fallback).
struct Listing {
  std::string key;  // the problem (descriptors and direction) it answers
  int status = kMiopenSuccess;
  std::vector<ConvSolution> solutions;
};

std::string problem_key(const cg_problem* p) {
  std::string k = fmt::format("{}|{}|{}|{}|{}|{}|{}|", p->direction, p->dtype, p->spatial_dims,
                              p->n, p->c, p->k, p->g);
  for (int i = 0; i < 3; ++i) {
    k += fmt::format("{},{},{},{},{},{};", p->input[i], p->filter[i], p->stride[i], p->dilation[i],
                     p->pad_begin[i], p->pad_end[i]);
  }
  const int rank = p->spatial_dims + 2;
  for (const std::int64_t* st : {p->x_strides, p->w_strides, p->y_strides}) {
    for (int i = 0; i < rank; ++i) k += fmt::format("{},", st[i]);
  }
  return k;
}

// The listing for p, asked once per problem (a sweep tries every solver on one problem in a row).
const Listing& listing(const cg_problem* p, const Descriptors& d) {
  static Listing last;
  const std::string key = problem_key(p);
  if (last.key == key) return last;
  const Api* api = session().api;
  Handle h = session().handle;
  TensorDesc a, b, o;
  direction_order(d, p->direction, a, b, o);
  last = Listing{key, kMiopenSuccess, {}};
  std::size_t n = 0;
  // The count comes from the find-db record unfiltered, or from the fallback (which fails with
  // NotImplemented when nothing applies): it bounds the list, it does not decide.
  last.status = api->count[p->direction](h, a, b, d.conv, o, &n);
  if (last.status != kMiopenSuccess) return last;
  last.solutions.resize(std::max<std::size_t>(n, 1));
  std::size_t got = 0;
  last.status = api->list[p->direction](h, a, b, d.conv, o, last.solutions.size(), &got,
                                        last.solutions.data());
  last.solutions.resize(last.status == kMiopenSuccess ? std::min(got, n) : 0);
  return last;
}

std::string listed_ids(const Listing& l) {
  std::string ids;
  for (const auto& c : l.solutions) {
    const auto* sol = session().table.find(c.solution_id);
    ids += fmt::format("{}{}", ids.empty() ? "" : ", ",
                       sol ? sol->name : fmt::format("id {}", c.solution_id));
  }
  return ids.empty() ? "none" : ids;
}

// Static rules plus, on an open device, MIOpen's own answer: the solver applies if and only if
// *GetSolution lists it. Never the workspace query: for the ~30 solvers whose MayNeedWorkspace()
// is false it answers 0 without asking IsApplicable(). `ws` receives the workspace size.
int check_solver(std::size_t index, const cg_problem* p, char* msg, std::size_t len,
                 std::size_t* ws) {
  Session& s = session();
  if (!s.api) {
    say(msg, len, s.why);
    return CG_NOT_APPLICABLE;
  }
  const auto& sol = s.table.solvers[index];
  if (!sol.directions[p->direction]) {
    say(msg, len, fmt::format("{} has no {} kernel", sol.name, kDirectionNames[p->direction]));
    return CG_NOT_APPLICABLE;
  }
  Descriptors d;
  std::string why;
  if (!describe(p, d, why)) {
    say(msg, len, why);
    return CG_NOT_APPLICABLE;
  }
  if (!s.handle) {
    say(msg, len,
        "no MIOpen device open in this process: applicability is decided on the device "
        "(the probe's worker asks MIOpen)");
    return CG_NOT_APPLICABLE;
  }
  const Listing& l = listing(p, d);
  const std::string call =
      fmt::format("miopenConvolution{}GetSolution", kApiDirections[p->direction]);
  if (l.status != kMiopenSuccess) {
    say(msg, len,
        fmt::format("MIOpen lists no solution for this problem ({}Count: {}), so {} (id {}) is "
                    "not run",
                    call, miopen_error(l.status), sol.name, sol.id));
    return CG_NOT_APPLICABLE;
  }
  for (const auto& c : l.solutions) {
    if (c.solution_id != sol.id) continue;
    // The listed size is what IsApplicable's solver computed (or the find-db recorded); the
    // workspace query adds nothing here but is asked too, and the larger is taken, so a
    // find-db record from another MIOpen cannot leave a kernel short of workspace.
    TensorDesc a, b, o;
    direction_order(d, p->direction, a, b, o);
    std::size_t queried = 0;
    if (s.api->workspace[p->direction](s.handle, a, b, d.conv, o, sol.id, &queried) !=
        kMiopenSuccess) {
      queried = 0;
    }
    if (ws) *ws = std::max(c.workspace_size, queried);
    say(msg, len,
        fmt::format("applicability: {} listed solution {} ({}) among {} for this problem", call,
                    sol.id, sol.name, l.solutions.size()));
    return CG_OK;
  }
  say(msg, len,
      fmt::format("MIOpen does not list solution {} ({}) for this problem: {} asks IsApplicable() "
                  "of the solvers in the find-db record, or without one of the dynamic solvers "
                  "with a WTI estimate, and listed {}",
                  sol.id, sol.name, call, listed_ids(l)));
  return CG_NOT_APPLICABLE;
}

template <std::size_t I>
int check_fn(const cg_problem* p, char* msg, std::size_t len) {
  return check_solver(I, p, msg, len, nullptr);
}

template <std::size_t I>
std::uint64_t workspace_fn(const cg_problem* p) {
  char msg[256];
  std::size_t ws = 0;
  return check_solver(I, p, msg, sizeof msg, &ws) == CG_OK ? ws : 0;
}

// A fault kills this process before any reply: stderr (kept with the trial) says what ran and
// why it was thought to apply, once per problem and solver (timing runs repeat).
void announce(std::size_t index, const cg_problem* p) {
  static std::string announced;
  const auto& sol = session().table.solvers[index];
  if (const std::string key = problem_key(p) + sol.name; key != announced) {
    announced = key;
    char note[512] = {};
    (void)check_solver(index, p, note, sizeof note, nullptr);
    std::fprintf(stderr, "convguard-miopen: running %s (id %llu): %s\n", sol.name.c_str(),
                 static_cast<unsigned long long>(sol.id), note);
    std::fflush(stderr);
  }
}

// *CompileSolution: builds the solver's kernels for the problem, or finds them in the kernel
// cache (MIOPEN_CUSTOM_CACHE_DIR, shared by the device's workers) and in the handle's own.
int compile_solution(std::size_t index, const cg_problem* p, const Descriptors& d, char* msg,
                     std::size_t len) {
  Session& s = session();
  const auto& sol = s.table.solvers[index];
  announce(index, p);
  TensorDesc a, b, o;
  direction_order(d, p->direction, a, b, o);
  if (int st = s.api->compile[p->direction](s.handle, a, b, d.conv, o, sol.id);
      st != kMiopenSuccess) {
    say(msg, len, fmt::format("MIOpen could not compile {}: {}", sol.name, miopen_error(st)));
    return CG_ERROR;
  }
  return CG_OK;
}

// plugin.h prepare() (ABI 4): the compile step alone, after MIOpen has listed the solver (its
// CompileSolution asks no one whether the solver applies), so the probe times it apart from the
// run under its own deadline.
int prepare_solver(std::uint64_t index, const cg_problem* p, char* msg, std::size_t len) {
  Session& s = session();
  if (index >= s.table.solvers.size()) {
    say(msg, len, "no such solver");
    return CG_ERROR;
  }
  if (int rc = check_solver(index, p, msg, len, nullptr); rc != CG_OK) return rc;
  Descriptors d;
  std::string why;
  if (!describe(p, d, why)) {
    say(msg, len, why);
    return CG_NOT_APPLICABLE;
  }
  return compile_solution(index, p, d, msg, len);
}

int run_solver(std::size_t index, const cg_problem* p, const cg_tensor* x, const cg_tensor* w,
               const cg_tensor* y, void* ws, std::uint64_t ws_bytes, char* msg, std::size_t len) {
  Session& s = session();
  const auto& sol = s.table.solvers[index];
  Descriptors d;
  std::string why;
  if (!s.handle || !describe(p, d, why)) {
    say(msg, len, s.handle ? why : "no MIOpen device open in this process");
    return CG_ERROR;
  }
  TensorDesc a, b, o;
  direction_order(d, p->direction, a, b, o);
  const int dir = p->direction;
  if (int rc = compile_solution(index, p, d, msg, len); rc != CG_OK) return rc;
  const void* ap = dir == 0 ? w->data : y->data;
  const void* bp = dir == 1 ? w->data : x->data;
  void* op = dir == 0 ? y->data : dir == 1 ? x->data : w->data;
  const int st = s.api->immediate[dir](s.handle, a, ap, b, bp, d.conv, o, op, ws, ws_bytes, sol.id);
  if (st != kMiopenSuccess) {
    say(msg, len, fmt::format("MIOpen {} failed: {}", sol.name, miopen_error(st)));
    // A launch that failed because the context is gone says so at the next runtime call.
    const int e = s.api->hipGetLastError();
    return e == kHipErrorIllegalAddress || e == kHipErrorLaunchFailure ? CG_DEVICE_LOST : CG_ERROR;
  }
  return CG_OK;
}

template <std::size_t I>
int run_fn(const cg_problem* p, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y,
           void* ws, std::uint64_t ws_bytes, char* msg, std::size_t len) {
  return run_solver(I, p, x, w, y, ws, ws_bytes, msg, len);
}

template <std::size_t... I>
std::vector<cg_solver> make_solvers(std::index_sequence<I...>) {
  return {cg_solver{nullptr, check_fn<I>, workspace_fn<I>, run_fn<I>}...};
}

const std::vector<cg_solver>& solvers() {
  static std::vector<std::string> ids;
  static std::vector<cg_solver> v = [] {
    Session& s = session();
    auto all = make_solvers(std::make_index_sequence<kMaxSolvers>());
    all.resize(s.table.solvers.size());
    for (const auto& sol : s.table.solvers) ids.push_back("miopen:" + sol.name);
    for (std::size_t i = 0; i < all.size(); ++i) all[i].id = ids[i].c_str();
    return all;
  }();
  return v;
}

int available(char* msg, std::size_t len) {
  Session& s = session();
  if (!s.api) {
    say(msg, len, s.why);
    return CG_ERROR;
  }
  return CG_OK;
}

const char* description() {
  return session().describe.c_str();
}

}  // namespace
}  // namespace convguard_miopen

using namespace convguard_miopen;

extern "C" __attribute__((visibility("default"))) const cg_plugin* convguard_plugin(void) {
  static const cg_plugin plugin = {CONVGUARD_PLUGIN_ABI_VERSION,
                                   "miopen",
                                   available,
                                   solvers().size(),
                                   solvers().data(),
                                   CG_DEVICE_PLUGIN,
                                   description,
                                   &kDevice,
                                   prepare_solver};
  return &plugin;
}
