// The GPU runtime shim: one spelling for CUDA and HIP, so every kernel source in src/gpu builds
// with nvcc (CUDA) and with hipcc (HIP, AMD targets). Only what convguard calls is mapped.
//
// Memory is always a plain device allocation (never managed memory: asking a GPU for more managed
// memory than it has can hang it), and every call and launch is checked (gpu/check.hpp).
#pragma once

#if defined(__HIPCC__) || defined(CONVGUARD_HIP)
#include <hip/hip_bfloat16.h>  // ROCm 5.x: hip_bfloat16 (RNE conversions)
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#define CG_GPU(name) hip##name
#define CG_GPU_BACKEND "hip"
using cg_device_prop = hipDeviceProp_t;
using cg_half = __half;
using cg_bf16 = hip_bfloat16;
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define CG_GPU(name) cuda##name
#define CG_GPU_BACKEND "cuda"
using cg_device_prop = cudaDeviceProp;
using cg_half = __half;
using cg_bf16 = __nv_bfloat16;
#endif

namespace convguard::gpu {

using Error = CG_GPU(Error_t);
using Stream = CG_GPU(Stream_t);
using Event = CG_GPU(Event_t);
inline constexpr Error kSuccess = CG_GPU(Success);

inline Error device_malloc(void** p, std::size_t bytes) {
  return CG_GPU(Malloc)(p, bytes);
}
inline Error device_free(void* p) {
  return CG_GPU(Free)(p);
}
inline Error copy_to_device(void* d, const void* h, std::size_t n) {
  return CG_GPU(Memcpy)(d, h, n, CG_GPU(MemcpyHostToDevice));
}
inline Error copy_to_host(void* h, const void* d, std::size_t n) {
  return CG_GPU(Memcpy)(h, d, n, CG_GPU(MemcpyDeviceToHost));
}
inline Error device_memset(void* d, int v, std::size_t n) {
  return CG_GPU(Memset)(d, v, n);
}
inline Error synchronize() {
  return CG_GPU(DeviceSynchronize)();
}
inline Error last_error() {
  return CG_GPU(GetLastError)();
}
inline const char* error_string(Error e) {
  return CG_GPU(GetErrorString)(e);
}
inline const char* error_name(Error e) {
  return CG_GPU(GetErrorName)(e);
}
inline Error event_create(Event* e) {
  return CG_GPU(EventCreate)(e);
}
inline Error event_destroy(Event e) {
  return CG_GPU(EventDestroy)(e);
}
inline Error event_record(Event e, Stream s = nullptr) {
  return CG_GPU(EventRecord)(e, s);
}
inline Error event_synchronize(Event e) {
  return CG_GPU(EventSynchronize)(e);
}
inline Error event_elapsed_ms(float* ms, Event a, Event b) {
  return CG_GPU(EventElapsedTime)(ms, a, b);
}

}  // namespace convguard::gpu
