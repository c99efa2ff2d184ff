// The oracle: direct convolution with fp64 accumulation over the stored (already rounded)
// inputs, for every direction, 2D/3D, groups, stride, dilation, asymmetric padding and any
// strides. Outputs are produced in fp64 in logical dense order so verification compares against
// unrounded values.
#pragma once

#include <cstdint>
#include <vector>

#include "convguard/problem.hpp"

namespace convguard {

// Dense fp64 copy of a tensor in logical order.
std::vector<double> to_dense_f64(const TensorView& t);

// The reference output of p's direction given the input tensors in `t` (the output tensor of
// `t` is not read). Dense logical order of the output tensor.
[[nodiscard]] Result<std::vector<double>> reference_output(const Problem& p, const ConvTensors& t);

// The same oracle for one output element (dense logical index), reading the inputs through
// their views: sampled verification of problems too large for a full fp64 result.
double reference_at(const Problem& p, const ConvTensors& t, std::int64_t output_index);

// Writes the reference result (rounded to the output's dtype) into the output tensor of `t`.
[[nodiscard]] Status reference_conv(const Problem& p, const ConvTensors& t);

}  // namespace convguard
