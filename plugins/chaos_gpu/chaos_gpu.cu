// chaos_gpu: GPU solvers that misbehave on purpose, to prove the probe on real hardware (issue 4):
//   gpu:chaos_hang  a kernel that never ends (spins on a flag nothing sets): the probe must record
//                   hang within its deadline and continue on a fresh worker;
//   gpu:chaos_oob   a kernel that writes far outside its buffer: the device faults ("illegal memory
//                   access"), the probe must record crash with the device's message and replace
//                   the worker, whose context is lost.
// Loaded only by tests (CONVGUARD_PLUGINS or --plugin), through the same ABI as vendor plugins.
#include <cuda_runtime.h>

#include <cstdio>

#include "convguard/plugin.h"

namespace {

__global__ void spin(const volatile int* flag) {
  while (*flag != 0x5eed) {
  }
}

__global__ void write_out_of_bounds(float* p) {
  // 1 TiB past the buffer: no allocation is there, so the write faults.
  p[(1ll << 38) + threadIdx.x] = 1.0f;
}

void say(char* msg, size_t len, const char* text) {
  if (msg && len) std::snprintf(msg, len, "%s", text);
}

int forward_f32(const cg_problem* p, char* msg, size_t len) {
  if (p->direction != 0 || p->dtype != 0) {
    say(msg, len, "chaos_gpu: forward f32 only");
    return CG_NOT_APPLICABLE;
  }
  return CG_OK;
}

uint64_t no_workspace(const cg_problem*) {
  return sizeof(int);
}

int run_hang(const cg_problem*, const cg_tensor*, const cg_tensor*, const cg_tensor*, void* ws,
             uint64_t, char* msg, size_t len) {
  if (cudaMemset(ws, 0, sizeof(int)) != cudaSuccess) {
    say(msg, len, "chaos_gpu: cudaMemset failed");
    return CG_ERROR;
  }
  spin<<<1, 1>>>(static_cast<const int*>(ws));
  return cudaGetLastError() == cudaSuccess ? CG_OK : CG_ERROR;
}

int run_oob(const cg_problem*, const cg_tensor*, const cg_tensor*, const cg_tensor* y, void*,
            uint64_t, char*, size_t) {
  write_out_of_bounds<<<1, 32>>>(static_cast<float*>(y->data));
  return cudaGetLastError() == cudaSuccess ? CG_OK : CG_ERROR;
}

int available(char* msg, size_t len) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    say(msg, len, "no CUDA device");
    return CG_ERROR;
  }
  return CG_OK;
}

const cg_solver kSolvers[] = {
    {"gpu:chaos_hang", forward_f32, no_workspace, run_hang},
    {"gpu:chaos_oob", forward_f32, no_workspace, run_oob},
};

const cg_plugin kPlugin = {CONVGUARD_PLUGIN_ABI_VERSION,
                           "chaos_gpu",
                           available,
                           2,
                           kSolvers,
                           CG_DEVICE_GPU,
                           nullptr,
                           nullptr,
                           nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) const cg_plugin* convguard_plugin(void) {
  return &kPlugin;
}
