// The cuDNN plugin: every algorithm of cuDNN's convolution API (forward 8, backward-data 6,
// backward-filter 7), each a convguard solver `cudnn:<direction>:<ALGO>`, plus a `:tensor_op`
// variant (CUDNN_TENSOR_OP_MATH) for f16/bf16 and a `:tf32` one for f32, and the graph API's
// engines and heuristic configurations (cudnn_graph.cpp). cuDNN is loaded with dlopen, so convguard
// builds and runs where it is absent; the library searched: $CONVGUARD_CUDNN_PATH (a file or a
// folder), the loader path (libcudnn.so.9), then the nvidia/cudnn/lib folder of an installed Python
// package. The version and path loaded are part of the GPU's fingerprint (describe()).
//
// Only API facts (function names, signatures, enum values from cudnn.h) are used.
#include <cudnn.h>
#include <dlfcn.h>
#include <glob.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "convguard/plugin.h"
#include "cudnn_api.hpp"

namespace convguard_cudnn {

bool resolve(Api& a) {
#define CG_CUDNN_RESOLVE(name)                                      \
  a.name = reinterpret_cast<decltype(a.name)>(dlsym(a.lib, #name)); \
  if (!a.name) {                                                    \
    a.error = a.path + ": no symbol " #name;                        \
    return false;                                                   \
  }
  CG_CUDNN_RESOLVE(cudnnGetVersion)
  CG_CUDNN_RESOLVE(cudnnGetErrorString)
  CG_CUDNN_RESOLVE(cudnnCreate)
  CG_CUDNN_RESOLVE(cudnnCreateTensorDescriptor)
  CG_CUDNN_RESOLVE(cudnnDestroyTensorDescriptor)
  CG_CUDNN_RESOLVE(cudnnSetTensorNdDescriptor)
  CG_CUDNN_RESOLVE(cudnnCreateFilterDescriptor)
  CG_CUDNN_RESOLVE(cudnnDestroyFilterDescriptor)
  CG_CUDNN_RESOLVE(cudnnSetFilterNdDescriptor)
  CG_CUDNN_RESOLVE(cudnnCreateConvolutionDescriptor)
  CG_CUDNN_RESOLVE(cudnnDestroyConvolutionDescriptor)
  CG_CUDNN_RESOLVE(cudnnSetConvolutionNdDescriptor)
  CG_CUDNN_RESOLVE(cudnnSetConvolutionGroupCount)
  CG_CUDNN_RESOLVE(cudnnSetConvolutionMathType)
  CG_CUDNN_RESOLVE(cudnnGetConvolutionForwardWorkspaceSize)
  CG_CUDNN_RESOLVE(cudnnGetConvolutionBackwardDataWorkspaceSize)
  CG_CUDNN_RESOLVE(cudnnGetConvolutionBackwardFilterWorkspaceSize)
  CG_CUDNN_RESOLVE(cudnnConvolutionForward)
  CG_CUDNN_RESOLVE(cudnnConvolutionBackwardData)
  CG_CUDNN_RESOLVE(cudnnConvolutionBackwardFilter)
  CG_CUDNN_RESOLVE(cudnnBackendCreateDescriptor)
  CG_CUDNN_RESOLVE(cudnnBackendDestroyDescriptor)
  CG_CUDNN_RESOLVE(cudnnBackendSetAttribute)
  CG_CUDNN_RESOLVE(cudnnBackendGetAttribute)
  CG_CUDNN_RESOLVE(cudnnBackendFinalize)
  CG_CUDNN_RESOLVE(cudnnBackendExecute)
  CG_CUDNN_RESOLVE(cudnnGetLastErrorString)
#undef CG_CUDNN_RESOLVE
  return true;
}

std::vector<std::string> candidates() {
  std::vector<std::string> c;
  if (const char* e = std::getenv("CONVGUARD_CUDNN_PATH"); e && *e) {
    const std::string s(e);
    c.push_back(s.size() > 3 && s.find(".so") != std::string::npos ? s : s + "/libcudnn.so.9");
  }
  c.push_back("libcudnn.so.9");
  for (const char* pattern :
       {"/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/lib/python3/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/opt/conda/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9"}) {
    glob_t g{};
    if (glob(pattern, 0, nullptr, &g) == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) c.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  return c;
}

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& p : candidates()) {
      a.lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!a.lib) {
        tried += (tried.empty() ? "" : "; ") + p;
        continue;
      }
      char where[4096] = {};
      if (dlinfo(a.lib, RTLD_DI_ORIGIN, where) == 0 && p.find('/') == std::string::npos) {
        a.path = std::string(where) + "/" + p;
      } else {
        a.path = p;
      }
      if (resolve(a)) return;
      dlclose(a.lib);
      a.lib = nullptr;
      tried += "; " + a.error;
    }
    a.error = "libcudnn.so.9 not found (tried " + tried + "; set CONVGUARD_CUDNN_PATH)";
  });
  return a;
}

void say(char* msg, std::size_t len, const std::string& text) {
  if (msg && len) std::snprintf(msg, len, "%s", text.c_str());
}

cudnnDataType_t data_type(int dtype) {
  return dtype == 1 ? CUDNN_DATA_HALF : dtype == 2 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// Descriptors of one problem, destroyed on scope exit.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    Api& a = api();
    if (x) a.cudnnDestroyTensorDescriptor(x);
    if (y) a.cudnnDestroyTensorDescriptor(y);
    if (w) a.cudnnDestroyFilterDescriptor(w);
    if (conv) a.cudnnDestroyConvolutionDescriptor(conv);
  }
};

// The problem in cuDNN's terms, or why it cannot be said: cuDNN pads symmetrically and takes the
// filter as dense KCRS or KRSC only.
std::string describe(const cg_problem* p, const cg_tensor* x, const cg_tensor* w,
                     const cg_tensor* y, cudnnMathType_t math, Descriptors& d) {
  Api& a = api();
  const int sp = p->spatial_dims, rank = sp + 2, first = 3 - sp;
  for (int i = first; i < 3; ++i) {
    if (p->pad_begin[i] != p->pad_end[i]) return "cuDNN pads symmetrically (pad_begin != pad_end)";
  }
  std::array<int, 5> xd{}, xs{}, yd{}, ys{}, wd{};
  for (int i = 0; i < rank; ++i) {
    xd[i] = static_cast<int>(x->dims[i]), xs[i] = static_cast<int>(x->strides[i]);
    yd[i] = static_cast<int>(y->dims[i]), ys[i] = static_cast<int>(y->strides[i]);
    wd[i] = static_cast<int>(w->dims[i]);
  }
  // Filter: dense KCRS (strides decreasing) or dense KRSC (channel stride 1).
  cudnnTensorFormat_t wfmt;
  if (w->strides[rank - 1] == 1 &&
      w->strides[1] == w->dims[rank - 1] * (rank == 5 ? w->dims[3] * w->dims[2] : w->dims[2])) {
    wfmt = CUDNN_TENSOR_NCHW;
  } else if (w->strides[1] == 1) {
    wfmt = CUDNN_TENSOR_NHWC;
  } else {
    return "cuDNN takes filters as dense KCRS or KRSC only";
  }
  std::array<int, 3> pad{}, stride{}, dil{};
  for (int i = 0; i < sp; ++i) {
    pad[i] = static_cast<int>(p->pad_begin[first + i]);
    stride[i] = static_cast<int>(p->stride[first + i]);
    dil[i] = static_cast<int>(p->dilation[first + i]);
  }
  const cudnnDataType_t dt = data_type(p->dtype);
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  auto ok = [&](cudnnStatus_t st) {
    s = st;
    return st == CUDNN_STATUS_SUCCESS;
  };
  if (!ok(a.cudnnCreateTensorDescriptor(&d.x)) || !ok(a.cudnnCreateTensorDescriptor(&d.y)) ||
      !ok(a.cudnnCreateFilterDescriptor(&d.w)) ||
      !ok(a.cudnnCreateConvolutionDescriptor(&d.conv)) ||
      !ok(a.cudnnSetTensorNdDescriptor(d.x, dt, rank, xd.data(), xs.data())) ||
      !ok(a.cudnnSetTensorNdDescriptor(d.y, dt, rank, yd.data(), ys.data())) ||
      !ok(a.cudnnSetFilterNdDescriptor(d.w, dt, wfmt, rank, wd.data())) ||
      !ok(a.cudnnSetConvolutionNdDescriptor(d.conv, sp, pad.data(), stride.data(), dil.data(),
                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) ||
      !ok(a.cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(p->g))) ||
      !ok(a.cudnnSetConvolutionMathType(d.conv, math))) {
    return std::string("descriptor: ") + a.cudnnGetErrorString(s);
  }
  return {};
}

// describe(), cached per (problem, tensors, math): the legacy API's run() then only calls cuDNN
// (building the four descriptors took ~30 us of host time per call on the H100 machine).
struct Described {
  Descriptors d;
  std::string error;
};
const Described& described(const cg_problem* p, const cg_tensor* x, const cg_tensor* w,
                           const cg_tensor* y, cudnnMathType_t math) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Described>> cache;
  Shapes sh;
  sh.x = *x, sh.w = *w, sh.y = *y;
  const std::string key = cache_key(p, sh, static_cast<int>(math));
  std::lock_guard lock(mu);
  auto& slot = cache[key];
  if (!slot) {
    slot = std::make_unique<Described>();
    slot->error = describe(p, x, w, y, math, slot->d);
  }
  return *slot;
}

// The cuDNN handle of this process (one worker, one GPU), created on first use.
cudnnHandle_t handle(std::string& error) {
  static cudnnHandle_t h = nullptr;
  static cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  static std::once_flag once;
  std::call_once(once, [] { status = api().cudnnCreate(&h); });
  if (status != CUDNN_STATUS_SUCCESS)
    error = std::string("cudnnCreate: ") + api().cudnnGetErrorString(status);
  return h;
}

std::string cache_key(const cg_problem* p, const Shapes& s, int tag) {
  std::string k(reinterpret_cast<const char*>(p), sizeof *p);
  for (const cg_tensor* t : {&s.x, &s.w, &s.y}) {
    k.append(reinterpret_cast<const char*>(t->dims), sizeof t->dims);
    k.append(reinterpret_cast<const char*>(t->strides), sizeof t->strides);
  }
  k += std::to_string(tag);
  return k;
}

Shapes shapes_of(const cg_problem* p) {
  Shapes s;
  const int sp = p->spatial_dims, rank = sp + 2, first = 3 - sp;
  auto fill = [&](cg_tensor& t, std::int64_t a, std::int64_t b, const std::int64_t* sz,
                  const std::int64_t* strides) {
    t.rank = rank;
    t.dtype = p->dtype;
    t.dims[0] = a, t.dims[1] = b;
    for (int i = 0; i < sp; ++i) t.dims[2 + i] = sz[first + i];
    for (int i = 0; i < rank; ++i) t.strides[i] = strides[i];
  };
  std::int64_t out[3];
  for (int i = 0; i < 3; ++i) {
    out[i] =
        (p->input[i] + p->pad_begin[i] + p->pad_end[i] - p->dilation[i] * (p->filter[i] - 1) - 1) /
            p->stride[i] +
        1;
  }
  fill(s.x, p->n, p->c, p->input, p->x_strides);
  fill(s.w, p->k, p->c / p->g, p->filter, p->w_strides);
  fill(s.y, p->n, p->k, out, p->y_strides);
  return s;
}

// Math modes, one solver each: plain, `:tensor_op` (tensor cores for f16/bf16) and `:tf32` (f32
// on tensor cores in TF32). Plain f32 asks for FMA math: cuDNN's default math lets f32 run in
// TF32 on Ampere and later (relative errors near 3e-4, which fp32 verification rightly
// rejects). The `:tf32` id suffix tells convguard the operands are rounded to TF32 (plugin.h), so
// it is verified with that tolerance and selected only where TF32 is allowed.
enum Math { kPlain, kTensorOp, kTf32 };

template <int M>
cudnnMathType_t math_of(const cg_problem* p) {
  if (M != kPlain) return CUDNN_TENSOR_OP_MATH;
  return p->dtype == 0 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
}

// Workspace size of (Dir, Algo) for a problem; an unsupported combination is the reason.
template <int Dir, int Algo, int M>
std::string workspace(const cg_problem* p, const cg_tensor* x, const cg_tensor* w,
                      const cg_tensor* y, std::size_t& bytes) {
  Api& a = api();
  if (!a.lib) return a.error;
  if (p->direction != Dir) return "another direction";
  if (M == kTensorOp && p->dtype == 0) return "tensor_op variants are for f16/bf16 (f32: :tf32)";
  if (M == kTf32 && p->dtype != 0) return "tf32 variants are for f32 problems";
  std::string err;
  cudnnHandle_t h = handle(err);
  if (!h) return err;
  const Described& desc = described(p, x, w, y, math_of<M>(p));
  if (!desc.error.empty()) return desc.error;
  const Descriptors& d = desc.d;
  cudnnStatus_t s;
  if (Dir == 0)
    s = a.cudnnGetConvolutionForwardWorkspaceSize(
        h, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(Algo), &bytes);
  else if (Dir == 1)
    s = a.cudnnGetConvolutionBackwardDataWorkspaceSize(
        h, d.w, d.y, d.conv, d.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(Algo), &bytes);
  else
    s = a.cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(Algo), &bytes);
  if (s != CUDNN_STATUS_SUCCESS) return std::string("cuDNN: ") + a.cudnnGetErrorString(s);
  return {};
}

template <int Dir, int Algo, int M>
int check(const cg_problem* p, char* msg, std::size_t len) {
  const Shapes s = shapes_of(p);
  std::size_t bytes = 0;
  const std::string why = workspace<Dir, Algo, M>(p, &s.x, &s.w, &s.y, bytes);
  if (why.empty()) return CG_OK;
  say(msg, len, why);
  return CG_NOT_APPLICABLE;
}

template <int Dir, int Algo, int M>
uint64_t workspace_bytes(const cg_problem* p) {
  const Shapes s = shapes_of(p);
  std::size_t bytes = 0;
  return workspace<Dir, Algo, M>(p, &s.x, &s.w, &s.y, bytes).empty() ? bytes : 0;
}

template <int Dir, int Algo, int M>
int run(const cg_problem* p, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y, void* ws,
        uint64_t ws_bytes, char* msg, std::size_t len) {
  Api& a = api();
  std::string err;
  cudnnHandle_t h = handle(err);
  if (!h) {
    say(msg, len, err);
    return CG_ERROR;
  }
  const Described& desc = described(p, x, w, y, math_of<M>(p));
  if (!desc.error.empty()) {
    say(msg, len, desc.error);
    return CG_ERROR;
  }
  const Descriptors& d = desc.d;
  const float one = 1.f, zero = 0.f;  // beta 0: the output is written, never read
  cudnnStatus_t s;
  if (Dir == 0)
    s = a.cudnnConvolutionForward(h, &one, d.x, x->data, d.w, w->data, d.conv,
                                  static_cast<cudnnConvolutionFwdAlgo_t>(Algo), ws, ws_bytes, &zero,
                                  d.y, y->data);
  else if (Dir == 1)
    s = a.cudnnConvolutionBackwardData(h, &one, d.w, w->data, d.y, y->data, d.conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(Algo), ws,
                                       ws_bytes, &zero, d.x, x->data);
  else
    s = a.cudnnConvolutionBackwardFilter(h, &one, d.x, x->data, d.y, y->data, d.conv,
                                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(Algo), ws,
                                         ws_bytes, &zero, d.w, w->data);
  if (s == CUDNN_STATUS_SUCCESS) return CG_OK;
  say(msg, len, std::string("cuDNN: ") + a.cudnnGetErrorString(s));
  return s == CUDNN_STATUS_ALLOC_FAILED ? CG_OUT_OF_MEMORY : CG_ERROR;
}

// Names of cuDNN's algorithm enums, without their prefixes.
constexpr const char* kFwd[] = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};
constexpr const char* kBwdData[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                    "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr const char* kBwdFilter[] = {
    "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};

template <int Dir, int Algo, int M>
cg_solver make_solver() {
  const char* algo = Dir == 0 ? kFwd[Algo] : Dir == 1 ? kBwdData[Algo] : kBwdFilter[Algo];
  static const std::string id = std::string("cudnn:") +
                                (Dir == 0   ? "fwd:"
                                 : Dir == 1 ? "bwd_data:"
                                            : "bwd_weights:") +
                                algo +
                                (M == kTensorOp ? ":tensor_op"
                                 : M == kTf32   ? ":tf32"
                                                : "");
  return {id.c_str(), check<Dir, Algo, M>, workspace_bytes<Dir, Algo, M>, run<Dir, Algo, M>};
}

template <int Dir, std::size_t... A>
void add_direction(std::vector<cg_solver>& v, std::index_sequence<A...>) {
  (v.push_back(make_solver<Dir, static_cast<int>(A), kPlain>()), ...);
  (v.push_back(make_solver<Dir, static_cast<int>(A), kTensorOp>()), ...);
  (v.push_back(make_solver<Dir, static_cast<int>(A), kTf32>()), ...);
}

const std::vector<cg_solver>& solvers() {
  static const std::vector<cg_solver> v = [] {
    std::vector<cg_solver> s;
    add_direction<0>(s, std::make_index_sequence<CUDNN_CONVOLUTION_FWD_ALGO_COUNT>());
    add_direction<1>(s, std::make_index_sequence<CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>());
    add_direction<2>(s, std::make_index_sequence<CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>());
    add_graph_solvers(s);
    return s;
  }();
  return v;
}

int available(char* msg, std::size_t len) {
  if (api().lib) return CG_OK;
  say(msg, len, api().error);
  return CG_ERROR;
}

const char* description() {
  static const std::string d = [] {
    Api& a = api();
    if (!a.lib) return std::string("cuDNN not loaded");
    const std::size_t v = a.cudnnGetVersion();
    return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100) + " (" + a.path + ")";
  }();
  return d.c_str();
}

}  // namespace convguard_cudnn

using namespace convguard_cudnn;

extern "C" __attribute__((visibility("default"))) const cg_plugin* convguard_plugin(void) {
  static const cg_plugin plugin = {CONVGUARD_PLUGIN_ABI_VERSION,
                                   "cudnn",
                                   available,
                                   solvers().size(),
                                   solvers().data(),
                                   CG_DEVICE_GPU,
                                   description,
                                   nullptr,
                                   nullptr};
  return &plugin;
}
