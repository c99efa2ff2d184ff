// How long one pipeline stage of gpu:wgmma_implicit_gemm's consumers takes with no loads at all:
// the tensor cores' own time for a stage of 64 reduction elements (4 x m64nNk16 per m64 block,
// bf16 from 128-byte-swizzled shared memory, wgmma_ptx.cuh's instructions), with one or two
// consumer warpgroups and one or two m64 blocks each (kMI), and optionally (kSync) the
// warp-specialised kernel's stage protocol around it: a producer thread that waits for a stage's
// "empty" barrier and arrives on its "full" one (no copies), consumers that wait for "full",
// multiply, `wgmma.wait_group 1` and release the stage before on "empty" (one arrival per warp).
// Measured on the H200 (docs/gpu/2026-12-01-session24): the forward kernel's stages took ~500 ns
// whatever the tile up to 128 x 128; this says how much of that the multiplies alone take (without
// sync: 256 cycles a 128 x 64 stage, the tensor cores' peak). Caveat: ptxas serializes the wgmmas
// of the kSync variants (its "C7514" note: the mbarrier wait loop inside the wgmma pipeline), which
// the solver's own kernels do not trip (their build prints no C7514), so the kSync rows measure a
// serialized pipeline, not the solver's protocol: an upper bound on what barriers cost.
// Not part of the build (sm_90a only, run by hand on the GPU machine):
//   nvcc -std=c++20 -O3 -arch=sm_90a -Iinclude -Isrc bench/wgmma_stage_floor.cu -o wgmma_floor
//   ./wgmma_floor            (prints one row per configuration: cycles and ns a stage)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "gpu/solvers/wgmma_ptx.cuh"

namespace wg = convguard::gpu::wg;

namespace {

constexpr int kRowBytes = 128;  // a stage row: 64 bf16 of the reduction
constexpr int kStages = 4;

template <int BN, int kMI, int kGroups>
constexpr int kStageBytes = (kGroups * 64 * kMI + BN) * kRowBytes;
template <int BN, int kMI, int kGroups>
constexpr int kSmemBytes = kStages* kStageBytes<BN, kMI, kGroups> + 1024 + 16 * kStages;

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// kSync: a producer warpgroup first (only its thread 0 works), then the consumers.
template <int BN, int kMI, int kGroups, bool kSync>
__global__ void stage_floor(int stages, long long* cycles, float* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint4 raw[];
  char* smem = reinterpret_cast<char*>(raw) + ((1024 - (smem_addr(raw) & 1023)) & 1023);
  const std::uint32_t base = smem_addr(smem);
  constexpr int kBytes = kStages * kStageBytes<BN, kMI, kGroups>;
  // Operands: small finite bf16 values (their products never overflow; what they are is moot).
  for (int i = threadIdx.x; i < kBytes / 2; i += blockDim.x)
    reinterpret_cast<unsigned short*>(smem)[i] = static_cast<unsigned short>(0x3c00 + (i & 0xff));
  const std::uint32_t full = base + kBytes, empty = full + 8 * kStages;
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages; ++s)
      wg::mbar_init(full + 8 * s, 1), wg::mbar_init(empty + 8 * s, 4 * kGroups);
  wg::fence_proxy_async();
  __syncthreads();
  const int producer_threads = kSync ? 128 : 0;
  if (static_cast<int>(threadIdx.x) < producer_threads) {
    if (threadIdx.x == 0)
      for (int it = 0; it < stages; ++it) {
        const int st = it % kStages;
        if (it >= kStages) wg::mbar_wait(empty + 8 * st, ((it / kStages) & 1) ^ 1);
        wg::mbar_arrive(full + 8 * st);
      }
    return;
  }
  const int tid = static_cast<int>(threadIdx.x) - producer_threads, group = tid / 128;
  const int lane = tid % 32;
  float acc[kMI][BN / 2] = {};
  const long long t0 = clock64();
  for (int it = 0; it < stages; ++it) {
    const int st = it % kStages;
    if constexpr (kSync) wg::mbar_wait(full + 8 * st, (it / kStages) & 1);
    const std::uint32_t sa =
        base + st * kStageBytes<BN, kMI, kGroups> + group * 64 * kMI * kRowBytes;
    const std::uint32_t sb =
        base + st * kStageBytes<BN, kMI, kGroups> + kGroups * 64 * kMI * kRowBytes;
    wg::fence_operands();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
        wg::mma<cg_bf16, BN>(acc[mi], wg::smem_desc(sa + mi * 64 * kRowBytes + ks * 32),
                             wg::smem_desc(sb + ks * 32), 1);
    wg::commit();
    wg::wait<1>();
    if constexpr (kSync)
      if (it > 0 && lane == 0) wg::mbar_arrive(empty + 8 * ((it - 1) % kStages));
  }
  wg::wait<0>();
  const long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) s += acc[mi][j];
  if (s == 12345.f) sink[0] = s;  // (keeps the accumulators live)
  if (tid == 0) cycles[blockIdx.x] = t1 - t0;
#else
  (void)stages, (void)cycles, (void)sink;
#endif
}

template <int BN, int kMI, int kGroups, bool kSync>
void run(int sms, long long* cycles, float* sink) {
  constexpr auto kernel = stage_floor<BN, kMI, kGroups, kSync>;
  constexpr int bytes = kSmemBytes<BN, kMI, kGroups>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  const int threads = 128 * kGroups + (kSync ? 128 : 0), stages = 2000;
  for (int blocks : {1, sms}) {
    kernel<<<blocks, threads, bytes>>>(stages, cycles, sink);  // warm-up
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    cudaEventRecord(a);
    kernel<<<blocks, threads, bytes>>>(stages, cycles, sink);
    cudaEventRecord(b);
    if (cudaEventSynchronize(b) != cudaSuccess) {
      std::printf("N=%d kMI=%d groups=%d sync=%d: %s\n", BN, kMI, kGroups, kSync,
                  cudaGetErrorString(cudaGetLastError()));
      return;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    long long c = 0;
    cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost);
    const double flop = 2.0 * kGroups * 64 * kMI * BN * 64;  // a stage's
    std::printf(
        "tile %3d x %3d  (%d warpgroup%s x %d m64, n%-3d)  %s  %3d blocks: %6.1f cycles, "
        "%6.1f ns a stage, %5.2f TFLOP/s an SM\n",
        kGroups * 64 * kMI, BN, kGroups, kGroups > 1 ? "s" : " ", kMI, BN,
        kSync ? "barriers" : "no sync ", blocks, double(c) / stages, 1e6 * ms / stages,
        flop * stages / (ms * 1e-3) / 1e12);  // (each block its own SM)
    cudaEventDestroy(a), cudaEventDestroy(b);
  }
}

}  // namespace

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  long long* cycles = nullptr;
  float* sink = nullptr;
  cudaMalloc(&cycles, sizeof(long long) * 1024);
  cudaMalloc(&sink, sizeof(float));
  for (bool sync : {false, true}) {
    auto one = [&](auto bn, auto mi, auto groups) {
      constexpr int BN = decltype(bn)::value, MI = decltype(mi)::value, G = decltype(groups)::value;
      if (sync)
        run<BN, MI, G, true>(sms, cycles, sink);
      else
        run<BN, MI, G, false>(sms, cycles, sink);
    };
    using std::integral_constant;
    one(integral_constant<int, 64>{}, integral_constant<int, 1>{}, integral_constant<int, 1>{});
    one(integral_constant<int, 64>{}, integral_constant<int, 1>{}, integral_constant<int, 2>{});
    one(integral_constant<int, 64>{}, integral_constant<int, 2>{}, integral_constant<int, 2>{});
    one(integral_constant<int, 128>{}, integral_constant<int, 1>{}, integral_constant<int, 1>{});
    one(integral_constant<int, 128>{}, integral_constant<int, 1>{}, integral_constant<int, 2>{});
    one(integral_constant<int, 128>{}, integral_constant<int, 2>{}, integral_constant<int, 2>{});
    one(integral_constant<int, 256>{}, integral_constant<int, 1>{}, integral_constant<int, 1>{});
    one(integral_constant<int, 256>{}, integral_constant<int, 1>{}, integral_constant<int, 2>{});
  }
  return 0;
}
