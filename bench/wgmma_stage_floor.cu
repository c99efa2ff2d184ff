// How long one pipeline stage of gpu:wgmma_implicit_gemm's consumers takes with no loads at all:
// the tensor cores' own time for a stage of 64 reduction elements (4 x m64nNk16 per m64 block,
// bf16 from 128-byte-swizzled shared memory, wgmma_ptx.cuh's instructions), with one or two
// consumer warpgroups and one or two m64 blocks each (kMI), and optionally (kSync) the
// warp-specialised kernel's stage protocol around it: a producer thread that waits for a stage's
// "empty" barrier and arrives on its "full" one (no copies), consumers that wait for "full",
// multiply, `wgmma.wait_group 1` and release the stage before on "empty" (one arrival per warp).
// Measured on the H200 (docs/gpu/2026-12-01-session24): the forward kernel's stages took ~500 ns
// whatever the tile up to 128 x 128; this says how much of that the multiplies alone take (without
// sync: 256 cycles a 128 x 64 stage, the tensor cores' peak) and the barriers around them.
// Not part of the build (sm_90a only, run by hand on the GPU machine):
//   nvcc -std=c++20 -O3 -arch=sm_90a -Iinclude -Isrc bench/wgmma_stage_floor.cu -o wgmma_floor
//   ./wgmma_floor            (prints one row per configuration: cycles and ns a stage)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/tma.cuh"
#include "gpu/solvers/wgmma_forward_common.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace wg = convguard::gpu::wg;

namespace {

using convguard::gpu::tc::smem_addr;
using convguard::gpu::wgf::kRowBytes;  // a stage row: 64 bf16 of the reduction
constexpr int kStages = 4;

// The solver's stage of kGroups * 64 * kMI rows of A and BN of B.
template <int BN, int kMI, int kGroups>
constexpr int kStageBytes = convguard::gpu::wgf::kStageBytes<kGroups * 64 * kMI, BN>;
template <int BN, int kMI, int kGroups>
constexpr int kSmemBytes = kStages* kStageBytes<BN, kMI, kGroups> + 1024 + 16 * kStages;

// kSync: a producer warpgroup first (only its thread 0 works), then the consumers. kLoads (with
// kSync): the producer also copies each stage's A and B by bulk tensor copies from two L2-resident
// [rows][4608] bf16 matrices (a_map, b_map: res5 3x3's GEMM of 1568 x 512 x 4608 as plain
// matrices), block b's tile at A row (b % 13) * 128 and B row (b / 13) * BN, the reduction
// position cycling through the 72 stages of 64: the solver's bulk-copy producer with tiled boxes.
// kIm2col (with kLoads): A by im2col copies instead, from x of 32 x 7 x 7 x 512
// (res5[b-c]_branch2b's, 3x3, padding 1: a_map is its im2col map of 128 pixels), as the solver
// loads it.
// kDivide (with kIm2col): the stage's tap located by dividing by the run-time `channels` and
// `taps` (512 and 3), as the solver's producer did before wg::TapCursor; else by constants.
template <int BN, int kMI, int kGroups, bool kSync, bool kLoads = false, bool kIm2col = false,
          bool kDivide = false>
__global__ void stage_floor(int stages, int channels, int taps, long long* cycles, float* sink,
                            const __grid_constant__ CUtensorMap a_map,
                            const __grid_constant__ CUtensorMap b_map) {
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
        if constexpr (kLoads) {
          constexpr int kRowsA = kGroups * 64 * kMI;
          const std::uint32_t A = base + st * kStageBytes<BN, kMI, kGroups>;
          const int kk = (it % 72) * 64, b = static_cast<int>(blockIdx.x);
          convguard::gpu::tma::mbar_arrive_expect(full + 8 * st, (kRowsA + BN) * kRowBytes);
          if constexpr (kIm2col) {
            const int cs = kDivide ? channels : 512, ts = kDivide ? taps : 3;
            const int m0 = (b % 13) * 128, tap = kk / cs, r = tap / ts, s = tap - r * ts;
            convguard::gpu::tma::tma_im2col(A, a_map, kk - tap * cs, m0 % 7 - 1, m0 / 7 % 7 - 1,
                                            m0 / 49, s, r, full + 8 * st);
          } else {
            convguard::gpu::tma::tma_tile(A, a_map, kk, (b % 13) * 128, full + 8 * st);
          }
          convguard::gpu::tma::tma_tile(A + kRowsA * kRowBytes, b_map, kk, (b / 13 % 8) * BN,
                                        full + 8 * st);
        } else {
          wg::mbar_arrive(full + 8 * st);
        }
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
  // The accumulators pinned after the last wait (an empty asm that reads and writes each): the
  // waits name no registers, so the compiler could otherwise schedule the reads below before
  // wgmma.wait_group, and ptxas then serializes every wgmma of the loop (its C7514 note).
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) asm volatile("" : "+f"(acc[mi][j])::"memory");
  float s = 0;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) s += acc[mi][j];
  if (s == 12345.f) sink[0] = s;  // (keeps the accumulators live)
  if (tid == 0) cycles[blockIdx.x] = t1 - t0;
#else
  (void)stages, (void)channels, (void)taps, (void)cycles, (void)sink, (void)a_map, (void)b_map;
#endif
}

template <int BN, int kMI, int kGroups, bool kSync, bool kLoads = false, bool kIm2col = false,
          bool kDivide = false>
void run(int stages, int sms, long long* cycles, float* sink, const CUtensorMap& a_map = {},
         const CUtensorMap& b_map = {}) {
  constexpr auto kernel = stage_floor<BN, kMI, kGroups, kSync, kLoads, kIm2col, kDivide>;
  constexpr int bytes = kSmemBytes<BN, kMI, kGroups>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  const int threads = 128 * kGroups + (kSync ? 128 : 0);
  for (int blocks : {1, kLoads ? 104 : sms}) {
    kernel<<<blocks, threads, bytes>>>(stages, 512, 3, cycles, sink, a_map, b_map);  // warm-up
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    cudaEventRecord(a);
    kernel<<<blocks, threads, bytes>>>(stages, 512, 3, cycles, sink, a_map, b_map);
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
        "%6.1f ns a stage, %5.2f TFLOP/s an SM, %7.2f us in all\n",
        kGroups * 64 * kMI, BN, kGroups, kGroups > 1 ? "s" : " ", kMI, BN,
        kDivide   ? "divide  "
        : kIm2col ? "im2col  "
        : kLoads  ? "loads   "
        : kSync   ? "barriers"
                  : "no sync ",
        blocks, double(c) / stages, 1e6 * ms / stages, flop * stages / (ms * 1e-3) / 1e12,
        1e3 * ms);  // (each block its own SM)
    cudaEventDestroy(a), cudaEventDestroy(b);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int stages = argc > 1 ? std::atoi(argv[1]) : 2000;  // a run's stages (72: res5's 3x3)
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
        run<BN, MI, G, true>(stages, sms, cycles, sink);
      else
        run<BN, MI, G, false>(stages, sms, cycles, sink);
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
  // The loads: A 1568 x 4608 and B 512 x 4608 bf16 (14 MB and 4.5 MB: L2-resident).
  constexpr int kCols = 4608;
  void *a = nullptr, *b = nullptr;
  cudaMalloc(&a, std::size_t{1568} * kCols * 2), cudaMalloc(&b, std::size_t{512} * kCols * 2);
  cudaMemset(a, 0x3c, std::size_t{1568} * kCols * 2);
  cudaMemset(b, 0x3c, std::size_t{512} * kCols * 2);
  CUtensorMap a128, a256, b64, b128;
  namespace tma = convguard::gpu::tma;
  if (!tma::tiled_map<cg_bf16>(a, kCols, 1568, 128, &a128, "floor") ||
      !tma::tiled_map<cg_bf16>(a, kCols, 1568, 256, &a256, "floor") ||
      !tma::tiled_map<cg_bf16>(b, kCols, 512, 64, &b64, "floor") ||
      !tma::tiled_map<cg_bf16>(b, kCols, 512, 128, &b128, "floor")) {
    std::printf("tensor maps failed\n");
    return 1;
  }
  run<64, 1, 2, true, true>(stages, sms, cycles, sink, a128, b64);
  run<128, 1, 2, true, true>(stages, sms, cycles, sink, a128, b128);
  run<64, 2, 2, true, true>(stages, sms, cycles, sink, a256, b64);
  // A by im2col from x (32 x 7 x 7 x 512 bf16), as res5[b-c]_branch2b's solver loads it.
  void* x = nullptr;
  cudaMalloc(&x, std::size_t{32} * 49 * 512 * 2);
  cudaMemset(x, 0x3c, std::size_t{32} * 49 * 512 * 2);
  CUtensorMap x128;
  if (!tma::im2col_map<cg_bf16>(x, tma::Walk{32, 7, 7, 512, 7, 7, 1, 1, 1, 1}, 128, &x128,
                                "floor")) {
    std::printf("im2col map failed\n");
    return 1;
  }
  run<64, 1, 2, true, true, true>(stages, sms, cycles, sink, x128, b64);
  run<128, 1, 2, true, true, true>(stages, sms, cycles, sink, x128, b128);
  run<64, 1, 2, true, true, true, true>(stages, sms, cycles, sink, x128, b64);
  return 0;
}
