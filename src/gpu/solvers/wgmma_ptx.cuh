// Hopper (sm_90a) warpgroup MMA in PTX, for gpu:wgmma_implicit_gemm (wgmma_implicit_gemm.cu):
// shared-memory matrix descriptors for 128-byte-swizzled K-major tiles, wgmma.mma_async with fp32
// accumulators (m64nNk16 for N = 64, 96, 128, 192, 256; f16/bf16 operands), its fence/commit/wait,
// and the proxy fence that makes ordinary shared-memory writes (cp.async, st.shared) visible to the
// tensor cores, mbarriers and named barriers (the warp-specialised kernel's), and the host's test
// whether a wgmma kernel runs on the current device. Compiled for sm_90a only (the instructions
// exist nowhere else); included by the wgmma solvers' .cu files (gpu:wgmma_implicit_gemm,
// gpu:wgmma_bwd_weights).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "convguard/status.hpp"
#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/runtime.hpp"

namespace convguard::gpu::wg {

// A K-major operand tile in shared memory: rows of 128 bytes (64 f16/bf16 of the reduction), each
// 16-byte chunk j of row i stored at chunk j ^ (i % 8) (the 128-byte swizzle, which the hardware
// computes from the address bits, so every 8-row group must start 1024-byte aligned). The
// descriptor: start address >> 4 in bits 0-13, leading-dimension byte offset >> 4 in 16-29
// (unused for swizzled K-major tiles whose k16 step lies inside one 128-byte row: 1), stride
// between 8-row groups (1024 bytes) >> 4 in 32-45, swizzle mode in 62-63 (1: 128 bytes).
// Advancing the start address by 32 bytes selects the next 16 reduction elements of every row.
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t addr) {
  return (static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4)) | (std::uint64_t{1} << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

// An MN-major operand tile (the reduction along rows: backward-weights' pixel rows of dy and x):
// 128-byte-swizzled atoms of 8 reduction rows x 64 M (or N) elements, 1024 bytes each, 16-byte
// chunk j of row i at j ^ (i % 8). The descriptor's stride byte offset (SBO) steps between 8-row
// groups along the reduction (1024 bytes: the atoms of one 64-wide column follow each other),
// its leading byte offset (LBO) between 64-wide atoms along M or N (`lbo` bytes).
__device__ __forceinline__ std::uint64_t smem_desc_mn(std::uint32_t addr, std::uint32_t lbo) {
  return (static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4)) |
         (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

__device__ __forceinline__ void fence_operands() {  // before a warpgroup's first wgmma of a batch
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wait() {  // at most N committed groups still running
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's earlier generic-proxy shared-memory writes (st.shared, completed cp.async)
// before later async-proxy reads (wgmma operands); needed in each writing thread before the
// barrier that hands the stage to the tensor cores.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// mbarriers (a 64-bit shared-memory object: an expected arrival count and a phase that completes
// when that many arrivals came): the warp-specialised kernel's full and empty stage barriers.
// init before any use (then a CTA barrier); arrive has release semantics at CTA scope, and a
// successful try_wait acquire, so what the arriving threads wrote before arriving is visible to
// the waiting ones after the wait.
__device__ __forceinline__ void mbar_init(std::uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the barrier's phase of parity `parity` (phase number % 2) has completed: the current
// phase or the one before it (a barrier never runs two phases ahead of its waiters here).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// A barrier of `threads` threads (whole warps) on hardware barrier `id` (0 is __syncthreads'):
// the consumer warpgroups' own, which the producer warps never reach.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Thread-block clusters: this block's rank in its cluster and the cluster's size; a barrier over
// every thread of every block of the cluster (release then acquire: shared-memory writes before it
// are visible to the cluster's blocks after it); and 16 bytes of fp32 from the shared memory of
// the cluster's block `rank`, at the offset of this block's `addr` (distributed shared memory).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_size() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}
// Programmatic dependent launch: lets the stream's next kernel, when it was launched with
// cudaLaunchAttributeProgrammaticStreamSerialization (a split's reduction pass,
// tc::launch_reduce_splits), place its blocks once every block of this grid has called this or
// ended, instead of after this grid ends; they wait for this grid's completion and writes
// (tc::wait_for_previous_grid) before reading anything. No effect on a next kernel launched plainly.
// The split kernels call it once a block has issued its tile's stores (its first thread there
// triggers the block; the pass's wait covers every write). Called at their start instead, the
// pass's blocks went early onto the few SMs the kernel left free, as many on each as fit: on the
// H200, backward-weights b32 res2a_branch2a ran 7% and res3a_branch1 4% slower than with plain
// launches, where at the tile's end every split layer ran 0-10% faster
// (docs/gpu/2026-11-30-session21, calls 4 and 6).
__device__ __forceinline__ void allow_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
// The cluster barrier at a kernel's end that keeps each block's shared memory alive until the
// other blocks' distributed loads of it are done: relaxed, since those loads' values were used
// before the arrival (so they are complete) and nothing written needs to be seen; a release
// would first wait for the block's global stores to be performed. The caller must consume every
// distributed load's value before it (a data dependency, not the memory model's ordering, is
// what completes the loads; as CUTLASS's kernels end, arrive.relaxed then wait). A caller whose
// loads might still be in flight needs cluster_sync.
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::
                   : "memory");
}
__device__ __forceinline__ float4 load_cluster_f4(std::uint32_t addr, unsigned rank) {
  float4 v;
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(addr), "r"(rank)
      : "memory");
  return v;
}
// A launch in thread-block clusters of `cluster` blocks (what cudaLaunchKernelEx and
// cudaOccupancyMaxActiveClusters take; cfg points into the object, so it is not copied).
struct ClusterLaunch {
  ClusterLaunch(dim3 grid, int threads, int bytes, dim3 cluster) {
    cfg.gridDim = grid;
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = static_cast<std::size_t>(bytes);
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster.x, attr[0].val.clusterDim.y = cluster.y;
    attr[0].val.clusterDim.z = cluster.z;
    cfg.attrs = attr, cfg.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1]{};
};
// Sixteen accumulator operands, d[i] to d[i + 15].
#define CG_D16(i)                                                                               \
  "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]),     \
      "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7]), "+f"(d[(i) + 8]), "+f"(d[(i) + 9]), \
      "+f"(d[(i) + 10]), "+f"(d[(i) + 11]), "+f"(d[(i) + 12]), "+f"(d[(i) + 13]),               \
      "+f"(d[(i) + 14]), "+f"(d[(i) + 15])

// d (64 x N fp32, the warpgroup's accumulator fragment) += A (64 x k) * B (N x k)^T, both from
// shared memory through descriptors; scale_d 0 would overwrite d instead. ab: the instruction's
// k and types ("k16.f32.bf16.bf16"), tr: its transpose immediates (", 0, 0"; none for TF32).
#define CG_WGMMA_N64(ab, tr)                                                           \
  asm volatile(                                                                        \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                     \
      "wgmma.mma_async.sync.aligned.m64n64" ab                                         \
      " {"                                                                             \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "         \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
      "}, %32, %33, p, 1, 1" tr ";\n}\n"                                               \
      : CG_D16(0), CG_D16(16)                                                          \
      : "l"(a), "l"(b), "r"(scale_d)                                                   \
      : "memory")

#define CG_WGMMA_N128(ab, tr)                                                            \
  asm volatile(                                                                          \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                       \
      "wgmma.mma_async.sync.aligned.m64n128" ab                                          \
      " {"                                                                               \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"   \
      "}, %64, %65, p, 1, 1" tr ";\n}\n"                                                 \
      : CG_D16(0), CG_D16(16), CG_D16(32), CG_D16(48)                                    \
      : "l"(a), "l"(b), "r"(scale_d)                                                     \
      : "memory")

#define CG_WGMMA_N256(ab, tr)                                                                      \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                \
      "wgmma.mma_async.sync.aligned.m64n256" ab                                                    \
      " {"                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                     \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "           \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "           \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "           \
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "           \
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "           \
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "     \
      "%111, "                                                                                     \
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, " \
      "%127"                                                                                       \
      "}, %128, %129, p, 1, 1" tr ";\n}\n"                                                         \
      : CG_D16(0), CG_D16(16), CG_D16(32), CG_D16(48), CG_D16(64), CG_D16(80), CG_D16(96),         \
        CG_D16(112)                                                                                \
      : "l"(a), "l"(b), "r"(scale_d)                                                               \
      : "memory")

#define CG_WGMMA_N96(ab, tr)                                                             \
  asm volatile(                                                                          \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"                                       \
      "wgmma.mma_async.sync.aligned.m64n96" ab                                           \
      " {"                                                                               \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"   \
      "}, %48, %49, p, 1, 1" tr ";\n}\n"                                                 \
      : CG_D16(0), CG_D16(16), CG_D16(32)                                                \
      : "l"(a), "l"(b), "r"(scale_d)                                                     \
      : "memory")

#define CG_WGMMA_N192(ab, tr)                                                            \
  asm volatile(                                                                          \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                                       \
      "wgmma.mma_async.sync.aligned.m64n192" ab                                          \
      " {"                                                                               \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"   \
      "}, %96, %97, p, 1, 1" tr ";\n}\n"                                                 \
      : CG_D16(0), CG_D16(16), CG_D16(32), CG_D16(48), CG_D16(64), CG_D16(80)            \
      : "l"(a), "l"(b), "r"(scale_d)                                                     \
      : "memory")

// kMnA, kMnB: the operand is MN-major in shared memory (imm-trans-a, imm-trans-b; 16-bit types
// only): smem_desc_mn's layout, for operands stored with the reduction along rows (kMnB defaults to
// kMnA: both, as backward-weights' tiles). B alone: backward-data's filter tile read straight from
// the caller's KRSC filter, whose rows along the GEMM's N (dx's channels) are contiguous; A alone:
// the same filter tile in the pixel-wide kernel, where the channels are the M side. T = float:
// TF32 (m64nNk8, both operands K-major: the instruction has no transpose), which reads each fp32
// operand's top 19 bits, so a 32-byte k step is 8 elements where a 16-bit type's is 16.
template <typename T, int N, bool kMnA = false, bool kMnB = kMnA>
__device__ __forceinline__ void mma(float* d, std::uint64_t a, std::uint64_t b, int scale_d) {
  static_assert(N == 64 || N == 96 || N == 128 || N == 192 || N == 256,
                "m64n64, m64n96, m64n128, m64n192 or m64n256");
  static_assert(!std::is_same_v<T, float> || !(kMnA || kMnB), "TF32 operands are K-major only");
  // A 16-bit type's instruction in the transpose mode the template asks for (ab: its k and
  // types).
#define CG_WGMMA_16BIT(shape, ab)   \
  if constexpr (kMnA && kMnB)       \
    CG_WGMMA_##shape(ab, ", 1, 1"); \
  else if constexpr (kMnA)          \
    CG_WGMMA_##shape(ab, ", 1, 0"); \
  else if constexpr (kMnB)          \
    CG_WGMMA_##shape(ab, ", 0, 1"); \
  else                              \
    CG_WGMMA_##shape(ab, ", 0, 0");
#define CG_WGMMA_TYPED(shape)                        \
  if constexpr (std::is_same_v<T, float>) {          \
    CG_WGMMA_##shape("k8.f32.tf32.tf32", "");        \
  } else if constexpr (std::is_same_v<T, cg_bf16>) { \
    CG_WGMMA_16BIT(shape, "k16.f32.bf16.bf16")       \
  } else {                                           \
    CG_WGMMA_16BIT(shape, "k16.f32.f16.f16")         \
  }
  if constexpr (N == 64) {
    CG_WGMMA_TYPED(N64)
  } else if constexpr (N == 96) {
    CG_WGMMA_TYPED(N96)
  } else if constexpr (N == 128) {
    CG_WGMMA_TYPED(N128)
  } else if constexpr (N == 192) {
    CG_WGMMA_TYPED(N192)
  } else {
    CG_WGMMA_TYPED(N256)
  }
#undef CG_WGMMA_TYPED
#undef CG_WGMMA_16BIT
}
#undef CG_WGMMA_N64
#undef CG_WGMMA_N128
#undef CG_WGMMA_N256
#undef CG_WGMMA_N96
#undef CG_WGMMA_N192
#undef CG_D16

// Whether a wgmma kernel runs here: only on sm_90 (its code is sm_90a: no PTX, so no later
// GPU can load it either), and only if this build carries `Kernel`'s code; a failed image
// lookup is cleared so that it does not surface as the next launch's error.
template <auto Kernel>
Status hopper_here() {
  int dev = 0, major = 0, minor = 0;
  if (CG_GPU(GetDevice)(&dev) != kSuccess ||
      CG_GPU(DeviceGetAttribute)(&major, CG_GPU(DevAttrComputeCapabilityMajor), dev) != kSuccess ||
      CG_GPU(DeviceGetAttribute)(&minor, CG_GPU(DevAttrComputeCapabilityMinor), dev) != kSuccess) {
    (void)last_error();
    return not_applicable("no CUDA device (wgmma needs an sm_90 Hopper GPU)");
  }
  if (major != 9 || minor != 0)
    return not_applicable("needs an sm_90 (Hopper) GPU: the wgmma kernel is sm_90a code");
  CG_GPU(FuncAttributes) attr{};
  if (CG_GPU(FuncGetAttributes)(&attr, Kernel) != kSuccess) {
    (void)last_error();
    return not_applicable("this build holds no sm_90a code for the wgmma kernel");
  }
  return Status::ok();
}

}  // namespace convguard::gpu::wg
