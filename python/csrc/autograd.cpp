// conv and conv_transpose with autograd: forward through the direction's primitive, backward
// through the primitives of exactly the gradients autograd needs (backward-data only when x
// requires a gradient: a network's first layer never runs it), the bias gradient a sum over dy.
//
// A transposed convolution is the ordinary convolution whose input is its output: its forward
// is that convolution's backward-data pass with end padding `padding - output_padding` (the
// output rows output_padding adds are never read by the ordinary convolution), its input
// gradient that convolution's forward pass, its weight gradient that convolution's
// backward-weights pass with x and dy exchanged.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

namespace {

using at::IntArrayRef;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using Ints = std::vector<std::int64_t>;

// The geometry saved for backward.
struct Geometry {
  Ints stride, pad_begin, pad_end, dilation;
  std::int64_t groups = 1;
  std::string layer;
};

void save(AutogradContext* ctx, const Geometry& g) {
  ctx->saved_data["stride"] = g.stride;
  ctx->saved_data["pad_begin"] = g.pad_begin;
  ctx->saved_data["pad_end"] = g.pad_end;
  ctx->saved_data["dilation"] = g.dilation;
  ctx->saved_data["groups"] = g.groups;
  ctx->saved_data["layer"] = g.layer;
}

Geometry load(AutogradContext* ctx) {
  return {ctx->saved_data["stride"].toIntVector(),  ctx->saved_data["pad_begin"].toIntVector(),
          ctx->saved_data["pad_end"].toIntVector(), ctx->saved_data["dilation"].toIntVector(),
          ctx->saved_data["groups"].toInt(),        ctx->saved_data["layer"].toStringRef()};
}

at::Tensor forward_op(const at::Tensor& x, const at::Tensor& w, IntArrayRef stride,
                      IntArrayRef pad_begin, IntArrayRef pad_end, IntArrayRef dilation,
                      std::int64_t groups, c10::string_view layer) {
  static auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("convguard::conv_forward", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, IntArrayRef, IntArrayRef,
                            IntArrayRef, IntArrayRef, std::int64_t, c10::string_view)>();
  return op.call(x, w, stride, pad_begin, pad_end, dilation, groups, layer);
}

at::Tensor forward_op(const at::Tensor& x, const at::Tensor& w, const Geometry& g) {
  return forward_op(x, w, g.stride, g.pad_begin, g.pad_end, g.dilation, g.groups, g.layer);
}

// The backward passes: `t` is dy (backward-data) or x (backward-weights), `u` w or dy, `size` and
// `channels_last` describe the tensor written.
enum class Pass { data, weights };
at::Tensor backward_op(Pass pass, const at::Tensor& t, const at::Tensor& u, IntArrayRef size,
                       bool channels_last, const Geometry& g) {
  using Signature =
      at::Tensor(const at::Tensor&, const at::Tensor&, IntArrayRef, bool, IntArrayRef, IntArrayRef,
                 IntArrayRef, IntArrayRef, std::int64_t, c10::string_view);
  static auto data = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("convguard::conv_backward_data", "")
                         .typed<Signature>();
  static auto weights = c10::Dispatcher::singleton()
                            .findSchemaOrThrow("convguard::conv_backward_weights", "")
                            .typed<Signature>();
  return (pass == Pass::data ? data : weights)
      .call(t, u, size, channels_last, g.stride, g.pad_begin, g.pad_end, g.dilation, g.groups,
            g.layer);
}

bool channels_last(const at::Tensor& t) {
  return t.suggest_memory_format() != at::MemoryFormat::Contiguous;
}

void add_bias(at::Tensor& y, const c10::optional<at::Tensor>& bias) {
  if (!bias || !bias->defined()) return;
  std::vector<std::int64_t> shape(static_cast<std::size_t>(y.dim()), 1);
  shape[1] = -1;
  y.add_(bias->view(shape));
}

at::Tensor bias_grad(const at::Tensor& dy, const at::Tensor& bias) {
  std::vector<std::int64_t> dims{0};
  for (std::int64_t d = 2; d < dy.dim(); ++d) dims.push_back(d);
  return dy.sum(dims, false, at::kFloat).to(bias.scalar_type());
}

// Which gradients autograd wants: edges are numbered over the tensor arguments actually given
// (x, w, then bias only when there is one).
struct Wanted {
  bool x, w, bias;
};
Wanted wanted(AutogradContext* ctx, bool has_bias) {
  return {ctx->needs_input_grad(0), ctx->needs_input_grad(1), has_bias && ctx->needs_input_grad(2)};
}

// Shared by both Functions: the forward's bias and saved state, and what backward restores.
at::Tensor finish_forward(AutogradContext* ctx, at::Tensor y, const at::Tensor& x,
                          const at::Tensor& w, const c10::optional<at::Tensor>& bias,
                          const Geometry& g) {
  add_bias(y, bias);
  ctx->save_for_backward({x, w, bias.value_or(at::Tensor())});
  save(ctx, g);
  return y;
}

struct Restored {
  at::Tensor x, w, bias, dy;
  Geometry g;
  Wanted want;
};
Restored restore(AutogradContext* ctx, const variable_list& grads) {
  const auto saved = ctx->get_saved_variables();
  Restored r{saved[0], saved[1], saved[2], grads[0], load(ctx), {}};
  r.want = wanted(ctx, r.bias.defined());
  return r;
}

class Conv : public torch::autograd::Function<Conv> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const c10::optional<at::Tensor>& bias, const Geometry& g) {
    at::AutoDispatchBelowADInplaceOrView below;
    return finish_forward(ctx, forward_op(x, w, g), x, w, bias, g);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Restored r = restore(ctx, grads);
    at::Tensor dx, dw, db;
    if (r.want.x) dx = backward_op(Pass::data, r.dy, r.w, r.x.sizes(), channels_last(r.x), r.g);
    if (r.want.w) dw = backward_op(Pass::weights, r.x, r.dy, r.w.sizes(), channels_last(r.w), r.g);
    if (r.want.bias) db = bias_grad(r.dy, r.bias);
    return {dx, dw, db, at::Tensor()};
  }
};

// The ordinary convolution behind a transposed one (see the top of this file).
Geometry ordinary_geometry(const Ints& stride, const Ints& padding, const Ints& output_padding,
                           const Ints& dilation, std::int64_t groups, std::string layer) {
  TORCH_CHECK(output_padding.size() == padding.size(), "convguard: layer '", layer,
              "': output_padding has ", output_padding.size(), " values, padding ", padding.size());
  Geometry g{stride, padding, padding, dilation, groups, std::move(layer)};
  for (std::size_t i = 0; i < padding.size(); ++i) {
    const std::int64_t op = output_padding[i];
    TORCH_CHECK(
        i < stride.size() && i < dilation.size() && op >= 0 && (op < stride[i] || op < dilation[i]),
        "convguard: layer '", g.layer, "': output_padding ", op,
        " must be >= 0 and smaller than the stride or the dilation");
    g.pad_end[i] -= op;
  }
  return g;
}

Ints transposed_output_size(const at::Tensor& x, const at::Tensor& w, const Geometry& g,
                            const Ints& output_padding) {
  Ints size{x.size(0), w.size(1) * g.groups};
  for (std::size_t i = 0; i < g.stride.size(); ++i) {
    const auto d = static_cast<std::int64_t>(i) + 2;
    size.push_back((x.size(d) - 1) * g.stride[i] - g.pad_begin[i] - g.pad_begin[i] +
                   g.dilation[i] * (w.size(d) - 1) + output_padding[i] + 1);
  }
  return size;
}

class ConvTranspose : public torch::autograd::Function<ConvTranspose> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const c10::optional<at::Tensor>& bias, const Geometry& g,
                            const Ints& output_padding) {
    at::AutoDispatchBelowADInplaceOrView below;
    TORCH_CHECK(x.dim() == w.dim() && x.dim() >= 3 &&
                    static_cast<std::size_t>(x.dim()) == g.stride.size() + 2,
                "convguard: layer '", g.layer, "': x has ", x.dim(), " dimensions, w ", w.dim(),
                ", stride ", g.stride.size(), " values");
    at::Tensor y = backward_op(Pass::data, x, w, transposed_output_size(x, w, g, output_padding),
                               channels_last(x), g);
    return finish_forward(ctx, std::move(y), x, w, bias, g);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Restored r = restore(ctx, grads);
    at::Tensor dx, dw, db;
    if (r.want.x) dx = forward_op(r.dy, r.w, r.g);
    if (r.want.w) dw = backward_op(Pass::weights, r.dy, r.x, r.w.sizes(), channels_last(r.w), r.g);
    if (r.want.bias) db = bias_grad(r.dy, r.bias);
    return {dx, dw, db, at::Tensor(), at::Tensor()};
  }
};

// Whether autograd will want gradients of this call: otherwise (inference, torch.no_grad, frozen
// layers on inputs without gradients) the forward primitive runs without an autograd node, whose
// creation costs more host time than the convolution's own call (docs/pytorch.md).
bool needs_graph(const at::Tensor& x, const at::Tensor& w, const c10::optional<at::Tensor>& bias) {
  return at::GradMode::is_enabled() &&
         (x.requires_grad() || w.requires_grad() || (bias && bias->requires_grad()));
}

at::Tensor conv(const at::Tensor& x, const at::Tensor& w, const c10::optional<at::Tensor>& bias,
                IntArrayRef stride, IntArrayRef pad_begin, IntArrayRef pad_end,
                IntArrayRef dilation, std::int64_t groups, c10::string_view layer) {
  if (!needs_graph(x, w, bias)) {
    at::Tensor y = forward_op(x, w, stride, pad_begin, pad_end, dilation, groups, layer);
    add_bias(y, bias);
    return y;
  }
  return Conv::apply(x, w, bias,
                     Geometry{stride.vec(), pad_begin.vec(), pad_end.vec(), dilation.vec(), groups,
                              std::string(layer)});
}

at::Tensor conv_transpose(const at::Tensor& x, const at::Tensor& w,
                          const c10::optional<at::Tensor>& bias, IntArrayRef stride,
                          IntArrayRef padding, IntArrayRef output_padding, IntArrayRef dilation,
                          std::int64_t groups, c10::string_view layer) {
  return ConvTranspose::apply(x, w, bias,
                              ordinary_geometry(stride.vec(), padding.vec(), output_padding.vec(),
                                                dilation.vec(), groups, std::string(layer)),
                              output_padding.vec());
}

}  // namespace

TORCH_LIBRARY_IMPL(convguard, CompositeImplicitAutograd, m) {
  m.impl("conv", conv);
  m.impl("conv_transpose", conv_transpose);
}
