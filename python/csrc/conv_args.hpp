// From PyTorch's view of a convolution (tensor sizes, memory formats, stride/padding/dilation
// lists) to convguard's Problem, and from tensors to the views a plan runs on. Torch-free, so the
// rules (what is refused and why) are the same for every entry point and testable on their own.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "convguard/problem.hpp"

namespace convguard::torch_ext {

// One convolution as its PyTorch caller writes it: sizes of x (N, C, [D,] H, W) and w
// (K, C/g, [D,] R, S), per-spatial-dim stride, padding at the start and at the end (PyTorch's
// symmetric `padding` gives both; 'same' with an even kernel puts the extra one at the end),
// dilation, groups.
struct ConvArgs {
  std::span<const std::int64_t> x_size, w_size;
  std::span<const std::int64_t> stride, pad_begin, pad_end, dilation;
  std::int64_t groups = 1;
  DType dtype = DType::f32;
  Layout x_layout = Layout::nchw, w_layout = Layout::nchw, y_layout = Layout::nchw;
  Direction direction = Direction::forward;
};

// The problem (normalized, so its identity matches the canonical string a suite file holds).
// Errors name the argument: "stride: 3 values for a 2D convolution", "w: 5 input channels per
// group, x has 6 in 2 groups", ...
[[nodiscard]] Result<Problem> problem_of(const ConvArgs& a);

}  // namespace convguard::torch_ext
