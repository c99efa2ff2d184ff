// Element types of GPU kernels: storage in f32, f16 or bf16; arithmetic in float (or double in the
// device reference). One load/store pair per type so kernels are written once.
#pragma once

#include "convguard/dtype.hpp"
#include "convguard/status.hpp"
#include "gpu/runtime.hpp"

namespace convguard::gpu {

__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(cg_half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_float(cg_bf16 v) {
  return static_cast<float>(v);
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ cg_half from_float<cg_half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ cg_bf16 from_float<cg_bf16>(float v) {
  return cg_bf16(v);
}

// Grid-stride loop bounds for `total` items.
__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// Calls `launch.template operator()<T>()` with T the storage type of `dt`.
template <typename F>
Status dispatch_dtype(DType dt, F&& launch) {
  switch (dt) {
    case DType::f32:
      return launch.template operator()<float>();
    case DType::f16:
      return launch.template operator()<cg_half>();
    case DType::bf16:
      return launch.template operator()<cg_bf16>();
  }
  return {StatusCode::internal_error, "unknown dtype"};
}

}  // namespace convguard::gpu
