// The oracle: direct convolution with fp64 accumulation over the stored (already rounded)
// inputs, for every direction, 2D/3D, groups, stride, dilation, asymmetric padding and any
// strides. Outputs are produced in fp64 in logical dense order so verification compares against
// unrounded values.
#pragma once

#include <cstdint>
#include <vector>

#include "convguard/problem.hpp"

namespace convguard {

// What the oracle multiplies. `stored`: the tensors as they are (the reference). `magnitude`: the
// absolute values, so each output is the sum of |products| that the element's rounding-error
// bound scales with. `tf32_rounded`: f32 operands rounded to TF32's 10-bit mantissa (to nearest,
// ties away, as tensor cores' cvt.rna), the result a solver computing in TF32 would approach.
enum class Operands { stored, magnitude, tf32_rounded };

// An f32 value rounded to TF32 (10 explicit mantissa bits), to nearest with ties away from zero.
float round_to_tf32(float v);

// Dense fp64 copy of a tensor in logical order.
std::vector<double> to_dense_f64(const TensorView& t);

// The reference output of p's direction given the input tensors in `t` (the output tensor of
// `t` is not read). Dense logical order of the output tensor.
[[nodiscard]] Result<std::vector<double>> reference_output(const Problem& p, const ConvTensors& t,
                                                         Operands operands = Operands::stored);

// The same oracle for one output element (dense logical index), reading the inputs through
// their views: sampled verification of problems too large for a full fp64 result.
double reference_at(const Problem& p, const ConvTensors& t, std::int64_t output_index,
                    Operands operands = Operands::stored);

// Writes the reference result (rounded to the output's dtype) into the output tensor of `t`.
[[nodiscard]] Status reference_conv(const Problem& p, const ConvTensors& t);

}  // namespace convguard
