#include "onednn_conv.hpp"

#include <omp.h>

#include <cstdio>
#include <map>
#include <mutex>

#include "onednn_api.hpp"

namespace convguard_onednn {

namespace {

constexpr std::uint64_t kAlign = 64;
std::uint64_t aligned(std::uint64_t b) {
  return (b + kAlign - 1) / kAlign * kAlign;
}

void say(char* msg, std::size_t len, const std::string& text) {
  if (msg && len) std::snprintf(msg, len, "%s", text.c_str());
}

dnnl_data_type_t data_type(int dtype) {
  return dtype == 1 ? dnnl_f16 : dtype == 2 ? dnnl_bf16 : dnnl_f32;
}

// What x, w and y are to oneDNN in each direction (argument, query), and which one is written.
struct Role {
  int arg;
  dnnl_query_t query;
  bool output;
};
struct Roles {
  Role x, w, y;
};
Roles roles(int direction) {
  switch (direction) {
    case 1:
      return {{DNNL_ARG_DIFF_SRC, dnnl_query_diff_src_md, true},
              {DNNL_ARG_WEIGHTS, dnnl_query_weights_md, false},
              {DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md, false}};
    case 2:
      return {{DNNL_ARG_SRC, dnnl_query_src_md, false},
              {DNNL_ARG_DIFF_WEIGHTS, dnnl_query_diff_weights_md, true},
              {DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md, false}};
    default:
      return {{DNNL_ARG_SRC, dnnl_query_src_md, false},
              {DNNL_ARG_WEIGHTS, dnnl_query_weights_md, false},
              {DNNL_ARG_DST, dnnl_query_dst_md, true}};
  }
}

// The problem's geometry and the caller's tensors (cg_problem's strides) as memory descriptors.
// Grouped weights are (G, K/G, C/G, spatial...) to oneDNN; convguard's are (K, C/G, spatial...).
struct Geometry {
  dnnl_dims_t stride{}, dilate{}, pad_l{}, pad_r{};
  int rank = 0, w_rank = 0;
  dnnl_dims_t x_dims{}, w_dims{}, y_dims{};
  dnnl_memory_desc_t x{}, w{}, y{};  // the caller's layouts
};

std::string geometry(const cg_problem& p, Geometry& g) {
  Api& a = api();
  const int sp = p.spatial_dims, first = 3 - sp;
  const int wo = p.g > 1 ? 1 : 0;
  g.rank = sp + 2;
  g.w_rank = g.rank + wo;
  dnnl_dims_t xs{}, ws{}, ys{};
  g.x_dims[0] = p.n, g.x_dims[1] = p.c, g.y_dims[0] = p.n, g.y_dims[1] = p.k;
  for (int i = 0; i < g.rank; ++i) xs[i] = p.x_strides[i], ys[i] = p.y_strides[i];
  if (wo) g.w_dims[0] = p.g, ws[0] = p.k / p.g * p.w_strides[0];
  g.w_dims[wo] = p.k / p.g, ws[wo] = p.w_strides[0];
  g.w_dims[wo + 1] = p.c / p.g, ws[wo + 1] = p.w_strides[1];
  for (int i = 0; i < sp; ++i) {
    const int d = first + i;
    g.x_dims[2 + i] = p.input[d];
    g.y_dims[2 + i] =
        (p.input[d] + p.pad_begin[d] + p.pad_end[d] - p.dilation[d] * (p.filter[d] - 1) - 1) /
            p.stride[d] +
        1;
    g.w_dims[wo + 2 + i] = p.filter[d];
    ws[wo + 2 + i] = p.w_strides[2 + i];
    g.stride[i] = p.stride[d];
    g.dilate[i] = p.dilation[d] - 1;  // oneDNN's dilation is 0-based
    g.pad_l[i] = p.pad_begin[d];
    g.pad_r[i] = p.pad_end[d];
  }
  const dnnl_data_type_t dt = data_type(p.dtype);
  dnnl_status_t s = a.dnnl_memory_desc_init_by_strides(&g.x, g.rank, g.x_dims, dt, xs);
  if (s == dnnl_success) s = a.dnnl_memory_desc_init_by_strides(&g.w, g.w_rank, g.w_dims, dt, ws);
  if (s == dnnl_success) s = a.dnnl_memory_desc_init_by_strides(&g.y, g.rank, g.y_dims, dt, ys);
  if (s != dnnl_success)
    return "oneDNN memory descriptor of the caller's tensors: " + status_text(s);
  return {};
}

// The operation descriptor of p over memory descriptors x, w, y. prop is used forward only.
dnnl_status_t op_desc(const cg_problem& p, int direction, const Geometry& g,
                      const dnnl_memory_desc_t& x, const dnnl_memory_desc_t& w,
                      const dnnl_memory_desc_t& y, dnnl_alg_kind_t alg, dnnl_prop_kind_t prop,
                      dnnl_convolution_desc_t& d) {
  (void)p;
  Api& a = api();
  if (direction == 1)
    return a.dnnl_dilated_convolution_backward_data_desc_init(&d, alg, &x, &w, &y, g.stride,
                                                              g.dilate, g.pad_l, g.pad_r);
  if (direction == 2)
    return a.dnnl_dilated_convolution_backward_weights_desc_init(
        &d, alg, &x, &w, nullptr, &y, g.stride, g.dilate, g.pad_l, g.pad_r);
  return a.dnnl_dilated_convolution_forward_desc_init(&d, prop, alg, &x, &w, nullptr, &y, g.stride,
                                                      g.dilate, g.pad_l, g.pad_r);
}

// Primitive attributes every solver uses: the scratchpad comes from convguard's workspace (so the
// probe sees and bounds the memory), and f32 stays f32 (no implicit down-conversion, whatever
// DNNL_DEFAULT_FPMATH_MODE says).
struct Attr {
  dnnl_primitive_attr_t a = nullptr;
  Attr() {
    if (api().dnnl_primitive_attr_create(&a) != dnnl_success) {
      a = nullptr;
      return;
    }
    (void)api().dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user);
    (void)api().dnnl_primitive_attr_set_fpmath_mode(a, dnnl_fpmath_mode_strict);
  }
  ~Attr() {
    if (a) api().dnnl_primitive_attr_destroy(a);
  }
  Attr(const Attr&) = delete;
  Attr& operator=(const Attr&) = delete;
};

const char* impl_name(const_dnnl_primitive_desc_t pd) {
  const char* s = nullptr;
  if (api().dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s) != dnnl_success || !s)
    return "unknown";
  return s;
}

// Calls take(pd, hint) for each implementation oneDNN offers for p in variant v; take returns true
// to keep pd and hint (then ownership passes to it and the walk stops). Returns the geometry's
// error, or empty.
template <class Take>
std::string each_impl(const cg_problem& p, Variant v, Geometry& g, Take&& take) {
  Api& a = api();
  if (!a.lib) return a.error;
  if (!engine()) return "oneDNN: no CPU engine";
  if (auto e = geometry(p, g); !e.empty()) return e;
  dnnl_memory_desc_t x = g.x, w = g.w, y = g.y;
  if (v == Variant::any) {
    const dnnl_data_type_t dt = data_type(p.dtype);
    (void)a.dnnl_memory_desc_init_by_tag(&x, g.rank, g.x_dims, dt, dnnl_format_tag_any);
    (void)a.dnnl_memory_desc_init_by_tag(&w, g.w_rank, g.w_dims, dt, dnnl_format_tag_any);
    (void)a.dnnl_memory_desc_init_by_tag(&y, g.rank, g.y_dims, dt, dnnl_format_tag_any);
  }
  const Attr attr;
  for (dnnl_alg_kind_t alg : {dnnl_convolution_direct, dnnl_convolution_winograd}) {
    dnnl_convolution_desc_t d{};
    if (op_desc(p, p.direction, g, x, w, y, alg, dnnl_forward_inference, d) != dnnl_success)
      continue;
    dnnl_primitive_desc_t hint = nullptr;
    if (p.direction != 0) {
      dnnl_convolution_desc_t fd{};
      if (op_desc(p, 0, g, x, w, y, alg, dnnl_forward_training, fd) != dnnl_success ||
          a.dnnl_primitive_desc_create(&hint, &fd, nullptr, engine(), nullptr) != dnnl_success)
        continue;
    }
    dnnl_primitive_desc_iterator_t it = nullptr;
    bool taken = false;
    if (a.dnnl_primitive_desc_iterator_create(&it, &d, attr.a, engine(), hint) == dnnl_success) {
      do {
        dnnl_primitive_desc_t pd = a.dnnl_primitive_desc_iterator_fetch(it);
        if (!pd) continue;
        if (take(pd, hint)) {
          taken = true;
          break;
        }
        a.dnnl_primitive_desc_destroy(pd);
      } while (a.dnnl_primitive_desc_iterator_next(it) == dnnl_success);
      a.dnnl_primitive_desc_iterator_destroy(it);
    }
    if (taken) return {};
    if (hint) a.dnnl_primitive_desc_destroy(hint);
  }
  return {};
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

}  // namespace

std::string sanitized(const char* impl_info) {
  std::string s = impl_info ? impl_info : "";
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  if (s.empty() || s[0] == '.' || s[0] == '-') s.insert(0, "_");
  return s;
}

std::vector<std::string> offered(const cg_problem& p, Variant v, std::string& why) {
  std::vector<std::string> names;
  Geometry g;
  why = each_impl(p, v, g, [&](dnnl_primitive_desc_t pd, dnnl_primitive_desc_t) {
    const std::string n = sanitized(impl_name(pd));
    bool seen = false;
    for (const auto& m : names) seen = seen || m == n;
    if (!seen) names.push_back(n);
    return false;
  });
  if (why.empty() && names.empty()) why = "oneDNN has no implementation for this problem";
  return names;
}

class Prepared {
 public:
  ~Prepared() {
    Api& a = api();
    for (Side* s : {&x, &w, &y}) {
      if (s->reorder) a.dnnl_primitive_destroy(s->reorder);
      if (s->reorder_pd) a.dnnl_primitive_desc_destroy(s->reorder_pd);
      if (s->user) a.dnnl_memory_destroy(s->user);
      if (s->inner) a.dnnl_memory_destroy(s->inner);
    }
    if (scratch) a.dnnl_memory_destroy(scratch);
    if (prim) a.dnnl_primitive_destroy(prim);
    if (pd) a.dnnl_primitive_desc_destroy(pd);
    if (hint) a.dnnl_primitive_desc_destroy(hint);
  }

  // One tensor: the caller's layout, oneDNN's (the same in the caller variant), and where the
  // reordered copy lives in the workspace.
  struct Side {
    Role role{};
    dnnl_memory_desc_t user_md{}, inner_md{};
    bool reordered = false;
    std::uint64_t offset = 0;
    dnnl_primitive_desc_t reorder_pd = nullptr;
    dnnl_primitive_t reorder = nullptr;
    dnnl_memory_t user = nullptr, inner = nullptr;
  };

  std::string error;
  int direction = 0;
  cg_problem problem{};
  dnnl_primitive_desc_t hint = nullptr, pd = nullptr;
  Side x, w, y;
  dnnl_memory_desc_t scratch_md{};
  std::uint64_t scratch_bytes = 0, workspace = 0;

  // Built on the first run (oneDNN generates its JIT code here), under mu.
  std::mutex mu;
  bool built = false;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_t scratch = nullptr;
};

namespace {

std::string key_of(const cg_problem& p, Variant v, const std::string& impl) {
  std::string k = std::to_string(p.spatial_dims) + "/" + std::to_string(p.direction) + "/" +
                  std::to_string(p.dtype) + "/" + std::to_string(p.g) + "," + std::to_string(p.n) +
                  "," + std::to_string(p.c) + "," + std::to_string(p.k);
  for (const std::int64_t* arr : {p.input, p.filter, p.stride, p.dilation, p.pad_begin, p.pad_end})
    for (int i = 0; i < 3; ++i) k += "," + std::to_string(arr[i]);
  for (const std::int64_t* arr : {p.x_strides, p.w_strides, p.y_strides})
    for (int i = 0; i < 5; ++i) k += "," + std::to_string(arr[i]);
  // oneDNN sizes its work partition for the thread count at creation.
  return k + "/" + (v == Variant::any ? "any" : "caller") + "/" + impl + "/" +
         std::to_string(omp_get_max_threads());
}

void fill(Prepared& r, const cg_problem& p, Variant v, const std::string& impl) {
  Api& a = api();
  r.direction = p.direction;
  r.problem = p;
  Geometry g;
  std::vector<std::string> names;
  const std::string why =
      each_impl(p, v, g, [&](dnnl_primitive_desc_t pd, dnnl_primitive_desc_t hint) {
        const std::string n = sanitized(impl_name(pd));
        if (n != impl) {
          bool seen = false;
          for (const auto& m : names) seen = seen || m == n;
          if (!seen) names.push_back(n);
          return false;
        }
        r.pd = pd, r.hint = hint;
        return true;
      });
  if (!why.empty()) {
    r.error = why;
    return;
  }
  if (!r.pd) {
    r.error = names.empty() ? "oneDNN has no implementation for this problem"
                            : "oneDNN offers no " + impl + " for this problem (it offers " +
                                  joined(names) + ")";
    return;
  }
  const Roles ro = roles(p.direction);
  const dnnl_memory_desc_t* users[] = {&g.x, &g.w, &g.y};
  Prepared::Side* sides[] = {&r.x, &r.w, &r.y};
  const Role* rs[] = {&ro.x, &ro.w, &ro.y};
  bool any_reorder = false;
  for (int i = 0; i < 3; ++i) {
    Prepared::Side& s = *sides[i];
    s.role = *rs[i];
    s.user_md = *users[i];
    const dnnl_memory_desc_t* inner = a.dnnl_primitive_desc_query_md(r.pd, s.role.query, 0);
    if (!inner) {
      r.error = "oneDNN: no memory descriptor for a tensor of " + impl;
      return;
    }
    s.inner_md = *inner;
    s.reordered = !a.dnnl_memory_desc_equal(&s.inner_md, &s.user_md);
    any_reorder = any_reorder || s.reordered;
  }
  if (v == Variant::caller && any_reorder) {
    r.error = "oneDNN chose another layout than the caller's";  // not expected: formats forced
    return;
  }
  if (v == Variant::any && !any_reorder) {
    r.error = "its preferred layouts are the caller's: this is the caller-layout variant again";
    return;
  }
  // The reorders' descriptors now (no code is generated yet): oneDNN reorders into some layouts
  // (Winograd's weights) only from some plain ones, and check() must say so, not run().
  for (Prepared::Side* s : sides) {
    if (!s->reordered) continue;
    const dnnl_memory_desc_t* from = s->role.output ? &s->inner_md : &s->user_md;
    const dnnl_memory_desc_t* to = s->role.output ? &s->user_md : &s->inner_md;
    const dnnl_status_t st =
        a.dnnl_reorder_primitive_desc_create(&s->reorder_pd, from, engine(), to, engine(), nullptr);
    if (st != dnnl_success) {
      s->reorder_pd = nullptr;
      r.error = std::string("oneDNN has no reorder between the caller's ") +
                (s == &r.x   ? "x"
                 : s == &r.w ? "w"
                             : "y") +
                " layout and " + impl + "'s (" + status_text(st) + ")";
      return;
    }
  }
  if (const dnnl_memory_desc_t* s =
          a.dnnl_primitive_desc_query_md(r.pd, dnnl_query_scratchpad_md, 0))
    r.scratch_md = *s, r.scratch_bytes = a.dnnl_memory_desc_get_size(s);
  std::uint64_t at = aligned(r.scratch_bytes);
  for (Prepared::Side* s : sides) {
    if (!s->reordered) continue;
    s->offset = at;
    at += aligned(a.dnnl_memory_desc_get_size(&s->inner_md));
  }
  r.workspace = at == 0 ? 0 : at + kAlign;  // room to align the caller's workspace pointer
}

// The primitive, the reorders and the memory objects (their buffers are set per call).
std::string build(Prepared& r) {
  Api& a = api();
  dnnl_status_t s = a.dnnl_primitive_create(&r.prim, r.pd);
  if (s != dnnl_success) return "oneDNN primitive creation: " + status_text(s);
  if (r.scratch_bytes && (s = a.dnnl_memory_create(&r.scratch, &r.scratch_md, engine(),
                                                   DNNL_MEMORY_NONE)) != dnnl_success)
    return "oneDNN scratchpad memory: " + status_text(s);
  for (Prepared::Side* t : {&r.x, &r.w, &r.y}) {
    s = a.dnnl_memory_create(&t->user, &t->user_md, engine(), DNNL_MEMORY_NONE);
    if (s == dnnl_success && t->reordered)
      s = a.dnnl_memory_create(&t->inner, &t->inner_md, engine(), DNNL_MEMORY_NONE);
    if (s != dnnl_success) return "oneDNN memory object: " + status_text(s);
    if (!t->reordered) continue;
    s = a.dnnl_primitive_create(&t->reorder, t->reorder_pd);
    if (s != dnnl_success) return "oneDNN reorder: " + status_text(s);
  }
  return {};
}

dnnl_status_t run_reorder(const Prepared::Side& t) {
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, t.role.output ? t.inner : t.user},
                                  {DNNL_ARG_TO, t.role.output ? t.user : t.inner}};
  return api().dnnl_primitive_execute(t.reorder, stream(), 2, args);
}

}  // namespace

const Prepared& prepare(const cg_problem& p, Variant v, const std::string& impl) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Prepared>> cache;
  const std::string key = key_of(p, v, impl);
  std::lock_guard lock(mu);
  auto& slot = cache[key];
  if (!slot) {
    slot = std::make_unique<Prepared>();
    fill(*slot, p, v, impl);
  }
  return *slot;
}

const std::string& error_of(const Prepared& prep) {
  return prep.error;
}

std::uint64_t workspace_of(const Prepared& prep) {
  return prep.workspace;
}

int execute(const Prepared& prep, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y,
            void* workspace, std::uint64_t workspace_bytes, char* msg, std::size_t len) {
  if (!prep.error.empty()) {
    say(msg, len, prep.error);
    return CG_ERROR;
  }
  if (workspace_bytes < prep.workspace || (prep.workspace && !workspace)) {
    say(msg, len,
        "workspace of " + std::to_string(workspace_bytes) + " bytes, needs " +
            std::to_string(prep.workspace));
    return CG_ERROR;
  }
  // The memory descriptors were made from the problem's strides: the tensors must have them.
  const cg_problem& p = prep.problem;
  for (int i = 0; i < p.spatial_dims + 2; ++i) {
    if (x->strides[i] != p.x_strides[i] || w->strides[i] != p.w_strides[i] ||
        y->strides[i] != p.y_strides[i]) {
      say(msg, len, "the tensors' strides are not the problem's");
      return CG_ERROR;
    }
  }
  Prepared& r = const_cast<Prepared&>(prep);  // the built state is guarded by r.mu
  std::lock_guard lock(r.mu);
  if (!r.built) {
    if (const std::string e = build(r); !e.empty()) {
      say(msg, len, e);
      return CG_ERROR;
    }
    r.built = true;
  }
  Api& a = api();
  const auto base = reinterpret_cast<std::uintptr_t>(workspace);
  char* ws = reinterpret_cast<char*>((base + kAlign - 1) / kAlign * kAlign);
  const cg_tensor* tensors[] = {x, w, y};
  Prepared::Side* sides[] = {&r.x, &r.w, &r.y};
  dnnl_exec_arg_t args[4];
  int nargs = 0;
  dnnl_status_t s = dnnl_success;
  for (int i = 0; i < 3 && s == dnnl_success; ++i) {
    Prepared::Side& t = *sides[i];
    s = a.dnnl_memory_set_data_handle(t.user, tensors[i]->data);
    if (s == dnnl_success && t.reordered) s = a.dnnl_memory_set_data_handle(t.inner, ws + t.offset);
    args[nargs++] = {t.role.arg, t.reordered ? t.inner : t.user};
  }
  if (s == dnnl_success && r.scratch) {
    s = a.dnnl_memory_set_data_handle(r.scratch, ws);
    args[nargs++] = {DNNL_ARG_SCRATCHPAD, r.scratch};
  }
  for (Prepared::Side* t : sides) {
    if (s == dnnl_success && t->reordered && !t->role.output) s = run_reorder(*t);
  }
  if (s == dnnl_success) s = a.dnnl_primitive_execute(r.prim, stream(), nargs, args);
  for (Prepared::Side* t : sides) {
    if (s == dnnl_success && t->reordered && t->role.output) s = run_reorder(*t);
  }
  if (s == dnnl_success) s = a.dnnl_stream_wait(stream());
  if (s == dnnl_success) return CG_OK;
  say(msg, len, "oneDNN execution: " + status_text(s));
  return s == dnnl_out_of_memory ? CG_OUT_OF_MEMORY : CG_ERROR;
}

}  // namespace convguard_onednn
