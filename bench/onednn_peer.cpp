#include "onednn_peer.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <variant>

namespace convguard::bench {

namespace {

using dnnl::memory;

memory::data_type data_type(DType t) {
  return t == DType::bf16  ? memory::data_type::bf16
         : t == DType::f16 ? memory::data_type::f16
                           : memory::data_type::f32;
}

// The caller's tensor (logical dims and strides); grouped weights as (G, K/G, C/G, ...).
memory::desc user_desc(const TensorDesc& d, std::int64_t groups) {
  memory::dims dims(d.dims.begin(), d.dims.begin() + d.rank);
  memory::dims strides(d.strides.begin(), d.strides.begin() + d.rank);
  if (groups > 1) {
    dims[0] /= groups;
    dims.insert(dims.begin(), groups);
    strides.insert(strides.begin(), strides[0] * dims[1]);
  }
  return memory::desc(dims, data_type(d.dtype), strides);
}

memory::desc any_desc(const memory::desc& user) {
  return memory::desc(user.dims(), user.data_type(), memory::format_tag::any);
}

}  // namespace

// One tensor: the caller's memory, oneDNN's (the same object when the layouts agree), and the
// reorder between them in the direction the data flows.
struct Side {
  memory user, inner;
  dnnl::reorder reorder;
  bool reordered = false, output = false;
};

struct OnednnPeer::State {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::primitive conv;
  std::string impl;
  int x_arg = 0, w_arg = 0, y_arg = 0;
  Side x, w, y;
  memory scratch;

  void side(Side& s, const memory::desc& user_md, const memory::desc& inner_md, void* data,
            bool output) {
    s.output = output;
    s.user = memory(user_md, eng, data);
    s.reordered = inner_md != user_md;
    s.inner = s.reordered ? memory(inner_md, eng) : s.user;
    if (s.reordered)
      s.reorder = output ? dnnl::reorder(s.inner, s.user) : dnnl::reorder(s.user, s.inner);
  }
  void reorder(Side& s) {
    if (s.reordered)
      s.reorder.execute(strm, s.output ? s.inner : s.user, s.output ? s.user : s.inner);
  }
  void run_conv() {
    conv.execute(
        strm,
        {{x_arg, x.inner}, {w_arg, w.inner}, {y_arg, y.inner}, {DNNL_ARG_SCRATCHPAD, scratch}});
  }
};

OnednnPeer::OnednnPeer(std::unique_ptr<State> s) : s_(std::move(s)) {}
OnednnPeer::~OnednnPeer() = default;

Result<std::unique_ptr<OnednnPeer>> OnednnPeer::create(const Problem& p, const ConvTensors& t) {
  try {
    auto s = std::make_unique<State>();
    const memory::desc xu = user_desc(t.x.desc, 1), yu = user_desc(t.y.desc, 1),
                       wu = user_desc(t.w.desc, p.g);
    memory::dims strides, dil, pl, pr;
    for (int d = 3 - p.spatial_dims; d < 3; ++d) {
      strides.push_back(p.stride[d]);
      dil.push_back(p.dilation[d] - 1);
      pl.push_back(p.pad_begin[d]);
      pr.push_back(p.pad_end[d]);
    }
    const auto alg = dnnl::algorithm::convolution_direct;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::convolution_forward::desc fwd(dnnl::prop_kind::forward_training, alg, any_desc(xu),
                                              any_desc(wu), any_desc(yu), strides, dil, pl, pr);
    memory::desc xi, wi, yi, scratch_md;
    if (p.direction == Direction::forward) {
      const dnnl::convolution_forward::desc inf(dnnl::prop_kind::forward_inference, alg,
                                                any_desc(xu), any_desc(wu), any_desc(yu), strides,
                                                dil, pl, pr);
      dnnl::convolution_forward::primitive_desc pd(inf, attr, s->eng);
      xi = pd.src_desc(), wi = pd.weights_desc(), yi = pd.dst_desc();
      scratch_md = pd.scratchpad_desc(), s->impl = pd.impl_info_str();
      s->conv = dnnl::convolution_forward(pd);
      s->x_arg = DNNL_ARG_SRC, s->w_arg = DNNL_ARG_WEIGHTS, s->y_arg = DNNL_ARG_DST;
    } else {
      const dnnl::convolution_forward::primitive_desc hint(fwd, s->eng);
      if (p.direction == Direction::backward_data) {
        const dnnl::convolution_backward_data::desc bd(alg, any_desc(xu), any_desc(wu),
                                                       any_desc(yu), strides, dil, pl, pr);
        dnnl::convolution_backward_data::primitive_desc pd(bd, attr, s->eng, hint);
        xi = pd.diff_src_desc(), wi = pd.weights_desc(), yi = pd.diff_dst_desc();
        scratch_md = pd.scratchpad_desc(), s->impl = pd.impl_info_str();
        s->conv = dnnl::convolution_backward_data(pd);
        s->x_arg = DNNL_ARG_DIFF_SRC, s->w_arg = DNNL_ARG_WEIGHTS, s->y_arg = DNNL_ARG_DIFF_DST;
      } else {
        const dnnl::convolution_backward_weights::desc bw(alg, any_desc(xu), any_desc(wu),
                                                          any_desc(yu), strides, dil, pl, pr);
        dnnl::convolution_backward_weights::primitive_desc pd(bw, attr, s->eng, hint);
        xi = pd.src_desc(), wi = pd.diff_weights_desc(), yi = pd.diff_dst_desc();
        scratch_md = pd.scratchpad_desc(), s->impl = pd.impl_info_str();
        s->conv = dnnl::convolution_backward_weights(pd);
        s->x_arg = DNNL_ARG_SRC, s->w_arg = DNNL_ARG_DIFF_WEIGHTS, s->y_arg = DNNL_ARG_DIFF_DST;
      }
    }
    const Direction d = p.direction;
    s->side(s->x, xu, xi, t.x.data, d == Direction::backward_data);
    s->side(s->w, wu, wi, t.w.data, d == Direction::backward_weights);
    s->side(s->y, yu, yi, t.y.data, d == Direction::forward);
    s->scratch = memory(scratch_md, s->eng);
    // The inputs in oneDNN's layouts once, for exec().
    for (Side* side : {&s->x, &s->w, &s->y}) {
      if (!side->output) s->reorder(*side);
    }
    s->strm.wait();
    return std::unique_ptr<OnednnPeer>(new OnednnPeer(std::move(s)));
  } catch (const dnnl::error& e) {
    return Status{StatusCode::not_applicable, std::string("oneDNN: ") + e.what()};
  }
}

Status OnednnPeer::exec() {
  try {
    s_->run_conv();
    s_->strm.wait();
    return Status::ok();
  } catch (const dnnl::error& e) {
    return Status{StatusCode::internal_error, std::string("oneDNN: ") + e.what()};
  }
}

Status OnednnPeer::with_reorders() {
  try {
    for (Side* side : {&s_->x, &s_->w, &s_->y}) {
      if (!side->output) s_->reorder(*side);
    }
    s_->run_conv();
    for (Side* side : {&s_->x, &s_->w, &s_->y}) {
      if (side->output) s_->reorder(*side);
    }
    s_->strm.wait();
    return Status::ok();
  } catch (const dnnl::error& e) {
    return Status{StatusCode::internal_error, std::string("oneDNN: ") + e.what()};
  }
}

std::string OnednnPeer::implementation() const {
  return s_->impl;
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (" + (v->hash ? v->hash : "no hash") + ")";
}

}  // namespace convguard::bench
