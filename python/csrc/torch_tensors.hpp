// PyTorch tensors as convguard sees them: dtype, layout (the memory format a tensor is dense in;
// anything else is copied once to the format PyTorch suggests for it) and device name.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "convguard/problem.hpp"

namespace convguard::torch_ext {

// f32/f16/bf16; anything else is an error naming `what`.
DType dtype_of(const at::Tensor& t, const char* what);
// The tensor dense in one of the two layouts convguard names (nchw = contiguous, nhwc =
// channels_last / channels_last_3d): `t` itself when it is, else a copy.
at::Tensor dense(const at::Tensor& t, Layout* layout);
at::MemoryFormat memory_format(Layout l, int64_t rank);
// "cpu" or "cuda:N"; errors for other devices or a CUDA tensor in a build without CUDA.
std::string device_name(const at::Tensor& t);
// The view of `t` (dense in the layout desc describes) that a plan runs on.
TensorView view_of(const at::Tensor& t, const TensorDesc& desc);

}  // namespace convguard::torch_ext
