#include "gpu/check.hpp"
#include "gpu/gpu.hpp"

namespace convguard::gpu {
namespace {

__device__ __forceinline__ unsigned long long now_ns() {
#if defined(__HIPCC__) || defined(CONVGUARD_HIP)
  return clock64() / 2;  // shader clock, taken as ~2 GHz: a delay need not be exact
#else
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

__global__ void spin(unsigned long long ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
}

}  // namespace

Status launch_delay(double microseconds) {
  spin<<<1, 1>>>(static_cast<unsigned long long>(microseconds * 1000));
  return check_launch("timing delay launch");
}

}  // namespace convguard::gpu
