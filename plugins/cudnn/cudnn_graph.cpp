// cuDNN's graph (backend) API as solvers, for each direction:
//   `cudnn:<direction>:engine<N>`  the operation graph's engine N (N < kMaxEngines) with default
//                                  knobs, enumerated from the graph's global engine count;
//   `cudnn:<direction>:heur<N>`    the N-th configuration (engine and knob choices) of cuDNN's
//                                  heuristic, mode A: what PyTorch runs, with the fast engines'
//                                  tuned knobs (default knobs alone ran at 15-23 TFLOP/s in bf16
//                                  on the H100 where the heuristic's choices are far faster);
//   `cudnn:<direction>:fallback<N>` the N-th configuration of cuDNN's fallback list (heuristic
//                                  mode FALLBACK). PyTorch's benchmark mode times mode A's and
//                                  this list's configurations together; without it the plugin
//                                  missed, e.g., engine 70 with tile-size knob 12, which PyTorch
//                                  runs on ResNet-50's fp32 NCHW 1x1 layers 25-35% faster than any
//                                  mode-A configuration or default-knob engine (H100, cuDNN 9.19).
// One whose descriptor or execution plan does not finalize is unsupported with cuDNN's own message.
// This is the real peer of convguard's GPU solvers.
//
// On f32 problems an engine with the tensor-core numerical note computes in TF32, which fp32
// verification rejects (relative error ~3e-4): the plain id declines it and says so, and its
// `:tf32` twin (`cudnn:fwd:engine3:tf32`, `cudnn:fwd:heur0:tf32`) takes exactly those, verified
// with the TF32 tolerance (plugin.h's id convention). An engine's twins share one cached build; a
// heuristic's twins each count only the configurations of their own math (on f32, heur0 is the
// first fp32-accurate configuration of the ranking, heur0:tf32 the first TF32 one), as PyTorch
// filters the ranking by allow_tf32 before it uses it.
//
// Plans are cached per (problem, strides, engine), so run() only builds a variant pack and
// executes: host work between the timing events stays a few microseconds.
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cudnn_api.hpp"

namespace convguard_cudnn {
namespace {

constexpr int kMaxEngines = 16;

// Where a solver's configuration comes from: the graph's engine list with default knobs, or the
// ranked configurations of cuDNN's heuristic in mode A or mode FALLBACK.
enum Source { kEngine = 0, kHeuristicA = 1, kFallback = 2 };

// A backend descriptor, destroyed with its owner.
struct Desc {
  cudnnBackendDescriptor_t d = nullptr;
  Desc() = default;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  ~Desc() { reset(); }
  void reset() {
    if (d) api().cudnnBackendDestroyDescriptor(d);
    d = nullptr;
  }
};

std::string message(cudnnStatus_t s) {
  char buf[512] = {};
  api().cudnnGetLastErrorString(buf, sizeof buf);
  return std::string(api().cudnnGetErrorString(s)) + (buf[0] ? std::string(": ") + buf : "");
}

// One built (problem, engine): the plan, or why there is none.
struct Built {
  std::string error;
  bool tf32 = false;  // an f32 problem on an engine with the tensor-core numerical note
  Desc x, w, y, conv, op, graph, engine, cfg, plan;
  std::int64_t workspace = 0;
  // The variant pack of the last run's pointers (x, w, y, workspace): a training loop calls again
  // with the same buffers, and then run() only executes.
  mutable std::mutex vp_mu;
  mutable Desc vp;
  mutable std::array<void*, 4> vp_ptrs{};
};

// Sets attributes in order, stopping at the first failure (recorded in `st`).
struct Setter {
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  Setter& set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
              cudnnBackendAttributeType_t type, std::int64_t count, const void* v) {
    if (st == CUDNN_STATUS_SUCCESS) st = api().cudnnBackendSetAttribute(d, name, type, count, v);
    return *this;
  }
  Setter& create(Desc& d, cudnnBackendDescriptorType_t type) {
    if (st == CUDNN_STATUS_SUCCESS) st = api().cudnnBackendCreateDescriptor(type, &d.d);
    return *this;
  }
  Setter& finalize(const Desc& d) {
    if (st == CUDNN_STATUS_SUCCESS) st = api().cudnnBackendFinalize(d.d);
    return *this;
  }
};

std::string tensor(Desc& d, const cg_tensor& t, cudnnDataType_t dt, std::int64_t uid) {
  Setter s;
  const std::int64_t rank = t.rank, align = 16;
  s.create(d, CUDNN_BACKEND_TENSOR_DESCRIPTOR)
      .set(d.d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt)
      .set(d.d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, t.dims)
      .set(d.d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, t.strides)
      .set(d.d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
      .set(d.d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align)
      .finalize(d);
  return s.st == CUDNN_STATUS_SUCCESS ? "" : "tensor descriptor: " + message(s.st);
}

// Whether an engine computes an f32 problem in TF32 (it carries the tensor-core numerical note).
bool computes_tf32(cudnnBackendDescriptor_t engine, const cg_problem* p) {
  if (p->dtype != 0) return false;
  std::array<cudnnBackendNumericalNote_t, 16> notes{};
  std::int64_t n = 0;
  if (api().cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                     CUDNN_TYPE_NUMERICAL_NOTE, 16, &n,
                                     notes.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  for (std::int64_t i = 0; i < n && i < 16; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) return true;
  }
  return false;
}

// tf32: for a heuristic source on an f32 problem, which of the ranked configurations `index`
// counts: those that compute in TF32 (the :tf32 twin) or those that do not (the plain one), as
// PyTorch filters the list by allow_tf32 before it ranks or times it. The first 16 of a mixed list
// can all be TF32 ones: ResNet-50's fp32 1x1 layers had their fastest fp32 configuration at a
// position past 16, so the plain twins never reached it.
std::unique_ptr<Built> build(const cg_problem* p, const Shapes& sh, int dir, int index,
                             Source source, bool tf32) {
  auto b = std::make_unique<Built>();
  Api& a = api();
  std::string err;
  cudnnHandle_t h = handle(err);
  if (!h) {
    b->error = err;
    return b;
  }
  const cudnnDataType_t dt = data_type(p->dtype), comp = CUDNN_DATA_FLOAT;
  if (std::string e = tensor(b->x, sh.x, dt, 1); !e.empty()) {
    b->error = e;
    return b;
  }
  if (std::string e = tensor(b->w, sh.w, dt, 2); !e.empty()) {
    b->error = e;
    return b;
  }
  if (std::string e = tensor(b->y, sh.y, dt, 3); !e.empty()) {
    b->error = e;
    return b;
  }
  const int sp = p->spatial_dims, first = 3 - sp;
  std::array<std::int64_t, 3> dil{}, str{}, pre{}, post{};
  for (int i = 0; i < sp; ++i) {
    dil[i] = p->dilation[first + i], str[i] = p->stride[first + i];
    pre[i] = p->pad_begin[first + i], post[i] = p->pad_end[first + i];
  }
  const std::int64_t nsp = sp;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  Setter s;
  s.create(b->conv, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp)
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp)
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, dil.data())
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, str.data())
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, pre.data())
      .set(b->conv.d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, post.data())
      .finalize(b->conv);
  if (s.st != CUDNN_STATUS_SUCCESS) {
    b->error = "convolution descriptor: " + message(s.st);
    return b;
  }
  const float alpha = 1.f, beta = 0.f;
  const auto BD = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  if (dir == 0) {
    s.create(b->op, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, BD, 1, &b->x.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, BD, 1, &b->w.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, BD, 1, &b->y.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, BD, 1, &b->conv.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  } else if (dir == 1) {
    s.create(b->op, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, BD, 1, &b->x.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, BD, 1, &b->w.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, BD, 1, &b->y.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, BD, 1, &b->conv.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  } else {
    s.create(b->op, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, BD, 1, &b->x.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, BD, 1, &b->w.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, BD, 1, &b->y.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, BD, 1, &b->conv.d)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, 1,
             &alpha)
        .set(b->op.d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  }
  s.finalize(b->op);
  if (s.st != CUDNN_STATUS_SUCCESS) {
    b->error = "operation: " + message(s.st);
    return b;
  }
  s.create(b->graph, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
      .set(b->graph.d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
      .set(b->graph.d, CUDNN_ATTR_OPERATIONGRAPH_OPS, BD, 1, &b->op.d)
      .finalize(b->graph);
  if (s.st != CUDNN_STATUS_SUCCESS) {
    b->error = "operation graph: " + message(s.st);
    return b;
  }
  std::int64_t got = 0;
  if (source != kEngine) {
    // The index-th configuration (engine + knob choices) of cuDNN's heuristic: mode A is what
    // PyTorch runs without benchmark mode, with the fast engines' tuned knobs; benchmark mode
    // adds the fallback list's.
    Desc heur;
    const cudnnBackendHeurMode_t hm =
        source == kHeuristicA ? CUDNN_HEUR_MODE_A : CUDNN_HEUR_MODE_FALLBACK;
    s.create(heur, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
        .set(heur.d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, BD, 1, &b->graph.d)
        .set(heur.d, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm)
        .finalize(heur);
    if (s.st != CUDNN_STATUS_SUCCESS) {
      b->error = "heuristics: " + message(s.st);
      return b;
    }
    std::int64_t n = 0;
    if (a.cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, BD, 0, &n, nullptr) !=
        CUDNN_STATUS_SUCCESS) {
      b->error = "heuristics: no result count";
      return b;
    }
    std::vector<Desc> cfgs(static_cast<std::size_t>(n));
    std::vector<cudnnBackendDescriptor_t> raw;
    for (auto& c : cfgs) {
      s.create(c, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(c.d);
    }
    if (s.st == CUDNN_STATUS_SUCCESS)
      s.st = a.cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, BD, n, &got,
                                        raw.data());
    if (s.st != CUDNN_STATUS_SUCCESS) {
      b->error = "heuristics results: " + message(s.st);
      return b;
    }
    // The index-th configuration of this twin's math (every one for f16/bf16).
    std::int64_t seen = 0;
    for (auto& c : cfgs) {
      Desc engine;
      s.create(engine, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      if (s.st == CUDNN_STATUS_SUCCESS)
        s.st = a.cudnnBackendGetAttribute(c.d, CUDNN_ATTR_ENGINECFG_ENGINE, BD, 1, &got, &engine.d);
      if (s.st != CUDNN_STATUS_SUCCESS) {
        b->error = "heuristic configuration's engine: " + message(s.st);
        return b;
      }
      if (p->dtype == 0 && computes_tf32(engine.d, p) != tf32) continue;
      if (seen++ == index) {
        std::swap(b->cfg.d, c.d);  // keep the chosen one
        std::swap(b->engine.d, engine.d);
        break;
      }
    }
    if (!b->cfg.d) {
      b->error =
          std::string(source == kHeuristicA ? "cuDNN's heuristic" : "cuDNN's fallback list") +
          " offers " + std::to_string(seen) + " " +
          (p->dtype != 0 ? ""
           : tf32        ? "TF32 "
                         : "fp32-accurate ") +
          "configurations for this graph (" + std::to_string(n) + " in all)";
      return b;
    }
  } else {
    std::int64_t count = 0;
    if (a.cudnnBackendGetAttribute(b->graph.d, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                   CUDNN_TYPE_INT64, 1, &got, &count) != CUDNN_STATUS_SUCCESS) {
      b->error = "engine count unavailable";
      return b;
    }
    if (index >= count) {
      b->error = "cuDNN offers " + std::to_string(count) + " engines for this graph";
      return b;
    }
    const std::int64_t gi = index;
    s.create(b->engine, CUDNN_BACKEND_ENGINE_DESCRIPTOR)
        .set(b->engine.d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, BD, 1, &b->graph.d)
        .set(b->engine.d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &gi)
        .finalize(b->engine);
    if (s.st != CUDNN_STATUS_SUCCESS) {
      b->error = "engine: " + message(s.st);
      return b;
    }
  }
  b->tf32 = computes_tf32(b->engine.d, p);
  if (source == kEngine) {
    s.create(b->cfg, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
        .set(b->cfg.d, CUDNN_ATTR_ENGINECFG_ENGINE, BD, 1, &b->engine.d)
        .finalize(b->cfg);
    if (s.st != CUDNN_STATUS_SUCCESS) {
      b->error = "engine config: " + message(s.st);
      return b;
    }
  }
  s.create(b->plan, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
      .set(b->plan.d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
      .set(b->plan.d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, BD, 1, &b->cfg.d)
      .finalize(b->plan);
  if (s.st != CUDNN_STATUS_SUCCESS) {
    b->error = "execution plan: " + message(s.st);
    return b;
  }
  if (a.cudnnBackendGetAttribute(b->plan.d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                 CUDNN_TYPE_INT64, 1, &got,
                                 &b->workspace) != CUDNN_STATUS_SUCCESS) {
    b->error = "workspace size unavailable";
    return b;
  }
  return b;
}

// The cached build of (problem, engine); built on first use.
const Built& get(const cg_problem* p, const Shapes& sh, int dir, int index, Source source,
                 bool tf32) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Built>> cache;
  // The twins of an engine share one build; a heuristic's twins count different configurations.
  const bool twin_specific = source != kEngine && p->dtype == 0 && tf32;
  const std::string key = cache_key(p, sh, index + 1000 * source + (twin_specific ? 10000 : 0));
  std::lock_guard lock(mu);
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, build(p, sh, dir, index, source, twin_specific)).first;
  return *it->second;
}

// Why a build is not this solver's: cuDNN's error, or the other twin's math (fp32 / TF32).
std::string refusal(const Built& b, bool tf32) {
  if (!b.error.empty()) return b.error;
  if (b.tf32 && !tf32) return "tensor-core engine on f32 computes in TF32 (the :tf32 variant)";
  if (!b.tf32 && tf32) return "computes f32 in fp32, not TF32 (the plain variant)";
  return {};
}

template <int Dir, int Index, Source From, bool Tf32>
int check(const cg_problem* p, char* msg, std::size_t len) {
  if (!api().lib) {
    say(msg, len, api().error);
    return CG_NOT_APPLICABLE;
  }
  if (p->direction != Dir) {
    say(msg, len, "another direction");
    return CG_NOT_APPLICABLE;
  }
  if (Tf32 && p->dtype != 0) {
    say(msg, len, "tf32 variants are for f32 problems");
    return CG_NOT_APPLICABLE;
  }
  const std::string why = refusal(get(p, shapes_of(p), Dir, Index, From, Tf32), Tf32);
  if (why.empty()) return CG_OK;
  say(msg, len, why);
  return CG_NOT_APPLICABLE;
}

template <int Dir, int Index, Source From, bool Tf32>
uint64_t workspace_bytes(const cg_problem* p) {
  if (!api().lib || p->direction != Dir) return 0;
  const Built& b = get(p, shapes_of(p), Dir, Index, From, Tf32);
  return refusal(b, Tf32).empty() ? static_cast<uint64_t>(b.workspace) : 0;
}

template <int Dir, int Index, Source From, bool Tf32>
int run(const cg_problem* p, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y, void* ws,
        uint64_t, char* msg, std::size_t len) {
  Shapes sh;
  sh.x = *x, sh.w = *w, sh.y = *y;
  const Built& b = get(p, sh, Dir, Index, From, Tf32);
  if (const std::string why = refusal(b, Tf32); !why.empty()) {
    say(msg, len, why);
    return CG_ERROR;
  }
  Api& a = api();
  std::string err;
  cudnnHandle_t h = handle(err);
  std::lock_guard lock(b.vp_mu);
  const std::array<void*, 4> now = {x->data, w->data, y->data, ws};
  Setter s;
  if (!b.vp.d || now != b.vp_ptrs) {
    b.vp.reset();
    b.vp_ptrs = {};
    std::array<std::int64_t, 3> uids = {1, 2, 3};
    std::array<void*, 3> ptrs = {x->data, w->data, y->data};
    s.create(b.vp, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        .set(b.vp.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data())
        .set(b.vp.d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs.data())
        .set(b.vp.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
        .finalize(b.vp);
    if (s.st == CUDNN_STATUS_SUCCESS) b.vp_ptrs = now;
  }
  if (s.st == CUDNN_STATUS_SUCCESS) s.st = a.cudnnBackendExecute(h, b.plan.d, b.vp.d);
  if (s.st == CUDNN_STATUS_SUCCESS) return CG_OK;
  say(msg, len, "cuDNN: " + message(s.st));
  return CG_ERROR;
}

template <int Dir, int Index, Source From, bool Tf32>
cg_solver make() {
  static const std::string id = std::string("cudnn:") +
                                (Dir == 0   ? "fwd"
                                 : Dir == 1 ? "bwd_data"
                                            : "bwd_weights") +
                                (From == kEngine       ? ":engine"
                                 : From == kHeuristicA ? ":heur"
                                                       : ":fallback") +
                                std::to_string(Index) + (Tf32 ? ":tf32" : "");
  return {id.c_str(), check<Dir, Index, From, Tf32>, workspace_bytes<Dir, Index, From, Tf32>,
          run<Dir, Index, From, Tf32>};
}

template <int Dir, std::size_t... I>
void add(std::vector<cg_solver>& v, std::index_sequence<I...>) {
  (v.push_back(make<Dir, static_cast<int>(I), kEngine, false>()), ...);
  (v.push_back(make<Dir, static_cast<int>(I), kHeuristicA, false>()), ...);
  (v.push_back(make<Dir, static_cast<int>(I), kFallback, false>()), ...);
  (v.push_back(make<Dir, static_cast<int>(I), kEngine, true>()), ...);
  (v.push_back(make<Dir, static_cast<int>(I), kHeuristicA, true>()), ...);
  (v.push_back(make<Dir, static_cast<int>(I), kFallback, true>()), ...);
}

}  // namespace

void add_graph_solvers(std::vector<cg_solver>& v) {
  add<0>(v, std::make_index_sequence<kMaxEngines>());
  add<1>(v, std::make_index_sequence<kMaxEngines>());
  add<2>(v, std::make_index_sequence<kMaxEngines>());
}

}  // namespace convguard_cudnn
