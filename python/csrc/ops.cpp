// The operators (TORCH_LIBRARY "convguard", so they show as torch.ops.convguard.* and in
// traces): three primitives, one per direction, each running a convguard plan on the caller's
// tensors, and two autograd-aware compositions, `conv` and `conv_transpose`, whose backward
// passes call the primitives for exactly the gradients autograd asks for.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <span>

#include "conv_args.hpp"
#include "cuda_order.hpp"
#include "planner.hpp"
#include "torch_tensors.hpp"

namespace convguard::torch_ext {
namespace {

using IntArrayRef = c10::IntArrayRef;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::span<const std::int64_t> span_of(IntArrayRef r) {
  return {r.data(), r.size()};
}

// Where and how a plan runs: the device, whether TF32 may compute f32 (PyTorch's own switch for
// convolutions, torch.backends.cudnn.allow_tf32), and the tensors' shared checks.
struct Site {
  std::string device;
  bool allow_tf32 = false;
};

Site site_of(const at::Tensor& a, const at::Tensor& b, const char* an, const char* bn) {
  TORCH_CHECK(a.device() == b.device(), "convguard: ", an, " is on ", a.device(), ", ", bn, " on ",
              b.device());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "convguard: ", an, " is ", a.scalar_type(), ", ",
              bn, " is ", b.scalar_type());
  Site s{device_name(a), false};
  if (a.is_cuda()) s.allow_tf32 = at::globalContext().allowTF32CuDNN();
  return s;
}

Problem problem_or_throw(ConvArgs a, c10::string_view layer) {
  // An empty batch is a valid call with an empty result; convguard's problems have n >= 1, so
  // the shape is worked out for one image and the caller returns before running anything.
  std::vector<std::int64_t> one_image;
  if (!a.x_size.empty() && a.x_size[0] == 0) {
    one_image.assign(a.x_size.begin(), a.x_size.end());
    one_image[0] = 1;
    a.x_size = one_image;
  }
  auto p = problem_of(a);
  TORCH_CHECK(p.is_ok(), "convguard: layer '", std::string(layer), "': ", p.status().message());
  return *p;
}

std::vector<std::int64_t> output_size(const Problem& p, std::int64_t n) {
  std::vector<std::int64_t> s{n, p.k};
  for (int d = 3 - p.spatial_dims; d < 3; ++d) s.push_back(p.output(d));
  return s;
}

// The backward passes take dy from autograd: it must have the convolution's output shape.
void check_dy(const Problem& p, std::int64_t n, const at::Tensor& dy, c10::string_view layer) {
  const std::vector<std::int64_t> out = output_size(p, n);
  TORCH_CHECK(dy.sizes() == c10::IntArrayRef(out), "convguard: layer '", std::string(layer),
              "': dy has sizes ", dy.sizes(), ", the convolution's output ", c10::IntArrayRef(out));
}

void run_or_throw(const Problem& p, const Site& site, c10::string_view layer, const at::Tensor& x,
                  const at::Tensor& w, const at::Tensor& y) {
  const ConvTensors t{view_of(x, x_desc(p)), view_of(w, w_desc(p)), view_of(y, y_desc(p))};
  const CudaOrder order(x);
  const Status st = Planner::instance().run(p, site.device, site.allow_tf32, std::string(layer), t);
  TORCH_CHECK(st.is_ok(), st.message());
}

at::Tensor conv_forward(const at::Tensor& x_in, const at::Tensor& w_in, IntArrayRef stride,
                        IntArrayRef pad_begin, IntArrayRef pad_end, IntArrayRef dilation,
                        std::int64_t groups, c10::string_view layer) {
  const Site site = site_of(x_in, w_in, "x", "w");
  Layout xl{}, wl{};
  const at::Tensor x = dense(x_in, &xl), w = dense(w_in, &wl);
  // The output in x's memory format; w's when x is dense in both (C = 1, 1x1 images), as PyTorch.
  const bool ambiguous = x.is_contiguous() && x.is_contiguous(memory_format(Layout::nhwc, x.dim()));
  const Layout yl = ambiguous ? wl : xl;
  const Problem p = problem_or_throw({span_of(x.sizes()), span_of(w.sizes()), span_of(stride),
                                      span_of(pad_begin), span_of(pad_end), span_of(dilation),
                                      groups, dtype_of(x, "x"), xl, wl, yl, Direction::forward},
                                     layer);
  at::Tensor y =
      at::empty(output_size(p, x.size(0)), x.options().memory_format(memory_format(yl, x.dim())));
  if (x.size(0) > 0) run_or_throw(p, site, layer, x, w, y);
  return y;
}

at::Tensor conv_backward_data(const at::Tensor& dy_in, const at::Tensor& w_in, IntArrayRef x_size,
                              bool x_channels_last, IntArrayRef stride, IntArrayRef pad_begin,
                              IntArrayRef pad_end, IntArrayRef dilation, std::int64_t groups,
                              c10::string_view layer) {
  const Site site = site_of(dy_in, w_in, "dy", "w");
  Layout dyl{}, wl{};
  const at::Tensor dy = dense(dy_in, &dyl), w = dense(w_in, &wl);
  const Layout xl = x_channels_last ? Layout::nhwc : Layout::nchw;
  const Problem p = problem_or_throw(
      {span_of(x_size), span_of(w.sizes()), span_of(stride), span_of(pad_begin), span_of(pad_end),
       span_of(dilation), groups, dtype_of(dy, "dy"), xl, wl, dyl, Direction::backward_data},
      layer);
  check_dy(p, x_size[0], dy, layer);
  at::Tensor dx = at::empty(x_size, dy.options().memory_format(memory_format(xl, dy.dim())));
  if (x_size[0] > 0) run_or_throw(p, site, layer, dx, w, dy);
  return dx;
}

at::Tensor conv_backward_weights(const at::Tensor& x_in, const at::Tensor& dy_in,
                                 IntArrayRef w_size, bool w_channels_last, IntArrayRef stride,
                                 IntArrayRef pad_begin, IntArrayRef pad_end, IntArrayRef dilation,
                                 std::int64_t groups, c10::string_view layer) {
  const Site site = site_of(x_in, dy_in, "x", "dy");
  Layout xl{}, dyl{};
  const at::Tensor x = dense(x_in, &xl), dy = dense(dy_in, &dyl);
  const Layout wl = w_channels_last ? Layout::nhwc : Layout::nchw;
  const Problem p = problem_or_throw(
      {span_of(x.sizes()), span_of(w_size), span_of(stride), span_of(pad_begin), span_of(pad_end),
       span_of(dilation), groups, dtype_of(x, "x"), xl, wl, dyl, Direction::backward_weights},
      layer);
  check_dy(p, x.size(0), dy, layer);
  at::Tensor dw = at::empty(w_size, x.options().memory_format(memory_format(wl, x.dim())));
  if (x.size(0) == 0) return dw.zero_();
  run_or_throw(p, site, layer, x, dw, dy);
  return dw;
}

}  // namespace
}  // namespace convguard::torch_ext

// Schemas of every operator; the autograd compositions are in autograd.cpp, the control
// operators (options, report, problem strings) in control.cpp.
TORCH_LIBRARY(convguard, m) {
  const char* geometry = "int[] stride, int[] pad_begin, int[] pad_end, int[] dilation, int groups";
  const auto def = [&](const std::string& head, const std::string& tail) {
    m.def((head + geometry + tail).c_str());
  };
  def("conv_forward(Tensor x, Tensor w, ", ", str layer) -> Tensor");
  def("conv_backward_data(Tensor dy, Tensor w, int[] x_size, bool x_channels_last, ",
      ", str layer) -> Tensor");
  def("conv_backward_weights(Tensor x, Tensor dy, int[] w_size, bool w_channels_last, ",
      ", str layer) -> Tensor");
  def("conv(Tensor x, Tensor w, Tensor? bias, ", ", str layer) -> Tensor");
  m.def(
      "conv_transpose(Tensor x, Tensor w, Tensor? bias, int[] stride, int[] padding, "
      "int[] output_padding, int[] dilation, int groups, str layer) -> Tensor");
  m.def("configure(str policy, str db, float trial_timeout_s) -> ()");
  m.def("report(str layer) -> str[]");
  m.def("clear_report() -> ()");
  m.def(
      "problem_string(int[] x_size, int[] w_size, int[] stride, int[] pad_begin, int[] pad_end, "
      "int[] dilation, int groups, ScalarType dtype, bool x_channels_last, bool w_channels_last, "
      "str direction) -> str");
}

TORCH_LIBRARY_IMPL(convguard, CPU, m) {
  using namespace convguard::torch_ext;
  m.impl("conv_forward", conv_forward);
  m.impl("conv_backward_data", conv_backward_data);
  m.impl("conv_backward_weights", conv_backward_weights);
}

#ifdef CONVGUARD_TORCH_CUDA
TORCH_LIBRARY_IMPL(convguard, CUDA, m) {
  using namespace convguard::torch_ext;
  m.impl("conv_forward", conv_forward);
  m.impl("conv_backward_data", conv_backward_data);
  m.impl("conv_backward_weights", conv_backward_weights);
}
#endif
