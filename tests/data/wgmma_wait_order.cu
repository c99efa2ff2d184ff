// tests/wgmma_ptxas_guard_test.sh's kernel: a loop of wgmma batches whose accumulators are read
// after the last wait (WGMMA_READ_EARLY undefined: ptxas keeps the pipeline), or inside the loop
// before any wait (defined: ptxas has to wait or serialize, and says so, which the guard fails).
#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

using namespace convguard::gpu;

__global__ void wgmma_wait_order(float* out, std::uint64_t a, std::uint64_t b, int batches) {
  float acc[64];
  for (int j = 0; j < 64; ++j) acc[j] = 0;
  float sum = 0;
  for (int i = 0; i < batches; ++i) {
    wg::fence_operands();
    wg::mma<cg_bf16, 128>(acc, a + i, b + i, 1);
    wg::commit();
#ifdef WGMMA_READ_EARLY
    sum += acc[i & 63];
#endif
  }
  wg::wait<0>();
  for (int j = 0; j < 64; ++j) sum += acc[j];
  out[threadIdx.x] = sum;
}
