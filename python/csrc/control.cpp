// Operators that steer the extension rather than compute: the selection policy, the report of
// what each layer ran, and canonical problem strings for suites of a user's model.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "conv_args.hpp"
#include "convguard/canonical.hpp"
#include "planner.hpp"
#include "torch_tensors.hpp"

namespace convguard::torch_ext {
namespace {

void configure(c10::string_view policy, c10::string_view db, double trial_timeout_s) {
  TORCH_CHECK(policy == "known" || policy == "first-verified", "convguard: policy '",
              std::string(policy),
              "': not known or first-verified ('off' never reaches the extension)");
  TORCH_CHECK(trial_timeout_s >= 0, "convguard: trial_timeout_s: ", trial_timeout_s,
              " (must be >= 0; 0 derives each trial's deadline from its cost)");
  Planner::instance().configure(
      PlannerOptions{policy == "first-verified", std::string(db), trial_timeout_s});
}

std::vector<std::string> report(c10::string_view layer) {
  return Planner::instance().report(std::string(layer));
}

void clear_report() {
  Planner::instance().clear_report();
}

std::string problem_string(at::IntArrayRef x_size, at::IntArrayRef w_size, at::IntArrayRef stride,
                           at::IntArrayRef pad_begin, at::IntArrayRef pad_end,
                           at::IntArrayRef dilation, std::int64_t groups, at::ScalarType dtype,
                           bool x_channels_last, bool w_channels_last, c10::string_view direction) {
  const Layout l = x_channels_last ? Layout::nhwc : Layout::nchw;
  const Layout wl = w_channels_last ? Layout::nhwc : Layout::nchw;
  Direction dir = Direction::forward;
  if (direction == "bwd_data")
    dir = Direction::backward_data;
  else if (direction == "bwd_weights")
    dir = Direction::backward_weights;
  else
    TORCH_CHECK(direction == "fwd", "convguard: direction '", std::string(direction),
                "': not fwd, bwd_data or bwd_weights");
  const auto p = problem_of({{x_size.data(), x_size.size()},
                             {w_size.data(), w_size.size()},
                             {stride.data(), stride.size()},
                             {pad_begin.data(), pad_begin.size()},
                             {pad_end.data(), pad_end.size()},
                             {dilation.data(), dilation.size()},
                             groups,
                             dtype_of(at::empty({0}, at::TensorOptions().dtype(dtype)), "dtype"),
                             l,
                             wl,
                             l,
                             dir});
  TORCH_CHECK(p.is_ok(), "convguard: ", p.status().message());
  return to_canonical(*p);
}

}  // namespace
}  // namespace convguard::torch_ext

TORCH_LIBRARY_IMPL(convguard, CatchAll, m) {
  using namespace convguard::torch_ext;
  m.impl("configure", configure);
  m.impl("report", report);
  m.impl("clear_report", clear_report);
  m.impl("problem_string", problem_string);
}
