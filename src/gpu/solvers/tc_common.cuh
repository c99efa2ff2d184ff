// Shared by the tensor-core solvers (CUDA only: PTX): cp.async, ldmatrix, mma.sync, paired
// stores, the split-K reduction, the SM count and the dense channels-last test and check. Included
// by .cu files only; everything is inline.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"
#include "convguard/tensor.hpp"
#include "gpu/element.cuh"
#include "gpu/runtime.hpp"

namespace convguard::gpu::tc {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; zero-filled when !valid (padding, edges).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// The mma is a register-only instruction (no volatile): the compiler may interleave it with the
// next step's ldmatrix, which hides their latency with only 4 warps per SM.
// d += a * b on one 16x8 tile over 32 bytes of reduction (16 f16/bf16, or 8 TF32: m16n8k8);
// `ab` names the operand type in the PTX instruction. The fragments' register layouts are the
// same in bytes, so one ldmatrix addressing serves every type.
#define CG_MMA_16816(ab)                                             \
  asm("mma.sync.aligned.m16n8k16.row.col.f32." ab "." ab             \
      ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])               \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
template <typename T>
__device__ __forceinline__ void mma(float* d, const std::uint32_t* a, const std::uint32_t* b) {
  if constexpr (std::is_same_v<T, float>) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (std::is_same_v<T, cg_bf16>) {
    CG_MMA_16816("bf16");
  } else {
    CG_MMA_16816("f16");
  }
}
#undef CG_MMA_16816

// Two adjacent outputs in one store (off is even and the row length even, so the pair is aligned).
template <typename T>
__device__ __forceinline__ void store_pair(T* y, float a, float b) {
  if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<float2*>(y) = make_float2(a, b);
  } else {
    struct alignas(4) Pair {
      T v[2];
    };
    *reinterpret_cast<Pair*>(y) = Pair{{from_float<T>(a), from_float<T>(b)}};
  }
}

// The ragged path's chunk: the first n (< 0 counts as 0) of a 16-byte chunk's elements, loaded
// one by one (src needs only element alignment: channel runs not multiples of 8 start anywhere),
// the rest zero. The zeros pad each tap's channels to a whole chunk.
template <typename T>
__device__ __forceinline__ uint4 load_ragged(const T* src, int n) {
  std::uint32_t v[4];
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t* s = reinterpret_cast<const std::uint32_t*>(src);
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = j < n ? s[j] : 0u;
  } else {
    const std::uint16_t* s = reinterpret_cast<const std::uint16_t*>(src);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t lo = 2 * j < n ? s[2 * j] : 0u, hi = 2 * j + 1 < n ? s[2 * j + 1] : 0u;
      v[j] = lo | hi << 16;
    }
  }
  return make_uint4(v[0], v[1], v[2], v[3]);
}

// The loaders of the implicit-GEMM kernels' k3D forms (Depth, tc_implicit_gemm_args.cuh): a GEMM
// row's image index img (over N * OD) as its batch index n and first input depth id0, and the
// source of tap row tr = t * taps_r + r, tap column s and channel c of a row whose window starts at
// (id0, ih0, iw0) of image n (x dense NDHWC, cs channels), `valid` being `row_ok` and the tap
// inside the input (else the load zero-fills). Plain ints, not the Depth: a reference into the
// kernel's parameters turns every later use into a load through it. The 2D kernels keep their own
// two lines for this (their code is then what it was before 3D).
// The two splits every k3D kernel makes (the implicit GEMMs' loaders here, the backward-weights
// kernels' own): an image index img over (n, od) as batch n and output depth od_i, and a tap row
// tr = t * taps_r + r as its depth and row offsets t * dd and r * dh (callers subtract padding).
__device__ __forceinline__ void split_image(int img, int od, int& n, int& od_i) {
  n = img / od, od_i = img % od;
}
__device__ __forceinline__ void split_tap_row(int tr, int taps_r, int dd, int dh, int& t_off,
                                              int& r_off) {
  const int t = tr / taps_r;
  t_off = t * dd, r_off = (tr - t * taps_r) * dh;
}
__device__ __forceinline__ void depth_of_row(int img, int od, int sd, int pd, int& n, int& id0) {
  int od_i;
  split_image(img, od, n, od_i);
  id0 = od_i * sd - pd;
}
template <typename T>
__device__ __forceinline__ const T* tap_source_3d(const T* x, int d, int dd, int taps_r, int h,
                                                  int w, int cs, int n, int id0, int ih0, int iw0,
                                                  int tr, int s, int dh, int dw, int c, bool row_ok,
                                                  bool& valid) {
  int t_off, r_off;
  split_tap_row(tr, taps_r, dd, dh, t_off, r_off);
  const int id = id0 + t_off, ih = ih0 + r_off, iw = iw0 + s * dw;
  valid = row_ok && id >= 0 && id < d && ih >= 0 && ih < h && iw >= 0 && iw < w;
  return x + (((static_cast<std::int64_t>(n) * d + id) * h + ih) * w + iw) * cs + c;
}

// An accumulator pair's epilogue store at `off` of a row-major [rows][cols] result: to the
// output, or (split-K) to this split's fp32 partial sums, plane blockIdx.z of `plane` elements.
template <typename T>
__device__ __forceinline__ void store_result(T* out, float* partial, std::int64_t plane,
                                             std::int64_t off, float a, float b) {
  if (partial) {
    float* dst = partial + static_cast<std::int64_t>(blockIdx.z) * plane + off;
    dst[0] = a;
    dst[1] = b;
  } else {
    store_pair(out + off, a, b);
  }
}

// The same for a pair that may be unaligned (`aligned` false: an odd output row length) or cut at
// the row's end (`two` false: only a is stored).
template <typename T>
__device__ __forceinline__ void store_result_ragged(T* out, float* partial, std::int64_t plane,
                                                    std::int64_t off, float a, float b, bool two,
                                                    bool aligned) {
  if (two && aligned) {
    store_result(out, partial, plane, off, a, b);
  } else if (partial) {
    float* dst = partial + static_cast<std::int64_t>(blockIdx.z) * plane + off;
    dst[0] = a;
    if (two) dst[1] = b;
  } else {
    out[off] = from_float<T>(a);
    if (two) out[off + 1] = from_float<T>(b);
  }
}

// f32 fragments rounded to TF32 (to nearest, ties away) before the mma, which would otherwise
// drop the low 13 bits (truncation): halves the operand error.
template <typename T, int N>
__device__ __forceinline__ void round_operands(std::uint32_t (&r)[N]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r[i]) : "f"(__uint_as_float(r[i])));
  }
}

// ldmatrix with transposition: the 8x8 tiles are stored with the reduction along rows (dy's and
// x's channels are contiguous in memory), each thread receives its fragment as if transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// A split's reduction pass launched to overlap its first kernel's end (launch_reduce_splits'
// `overlap`, programmatic dependent launch, compute capability 9.0): its blocks may be placed while
// the first kernel's last blocks still run, and each waits here until that kernel has ended and
// its writes are visible. A no-op in a kernel launched plainly, and on older devices.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Split-K: y = sum over splits of the partial sums, in the output type.
template <typename T>
__global__ void reduce_splits(const float* partial, T* y, std::int64_t elements, int splits) {
  wait_for_previous_grid();
  for (std::int64_t i = global_thread(); i < elements; i += grid_threads()) {
    float v = 0;
    for (int z = 0; z < splits; ++z) v += partial[z * elements + i];
    y[i] = from_float<T>(v);
  }
}

// Split-K: y = the splits' partial sums [split][quads of 4 elements], added in a fixed order
// (deterministic: no atomics): a block of 256 threads takes 256 / G consecutive quads, and its G
// groups of threads (G = kGroups: 1, or 8 above 8 splits) take the splits g, g + G, g + 2G, ... of
// each, one after another, then group 0 adds the groups' sums in group order. A warp's lanes read
// consecutive quads of one split (512 coalesced bytes a load), four splits' loads in flight at
// once. Above 8 splits it replaced a warp per quad (lane l adding splits l, l + 32, ...: 16-byte
// pieces of 32 places a load), which took 7.7 us for 16 planes of 128 x 512 on the H200 under
// Nsight Compute; ResNet-50 b32 backward-weights layers of 16 to 26 planes ran 1.04-1.10x faster
// (docs/gpu/2026-11-29-bwdw-tma). At 2 to 8 splits, groups of 2 to 8 lost 2-4% against a thread
// per quad (G = 1).
template <typename T, int kGroups>
__global__ void __launch_bounds__(256)
    reduce_splits4(const float* partial, T* y, std::int64_t quads, int splits) {
  constexpr int kPer = 256 / kGroups;  // quads a block
  __shared__ float4 sums[kGroups > 1 ? kGroups - 1 : 1][kPer];
  wait_for_previous_grid();
  const float4* p = reinterpret_cast<const float4*>(partial);
  const int g = static_cast<int>(threadIdx.x) / kPer, q = static_cast<int>(threadIdx.x) % kPer;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kPer + q;
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  auto add = [&v](const float4& u) { v.x += u.x, v.y += u.y, v.z += u.z, v.w += u.w; };
  if (i < quads) {
    int z = g;
    for (; z + 3 * kGroups < splits; z += 4 * kGroups) {
      const float4 u0 = p[z * quads + i], u1 = p[(z + kGroups) * quads + i];
      const float4 u2 = p[(z + 2 * kGroups) * quads + i], u3 = p[(z + 3 * kGroups) * quads + i];
      add(u0), add(u1), add(u2), add(u3);
    }
    for (; z < splits; z += kGroups) add(p[z * quads + i]);
  }
  if constexpr (kGroups > 1) {
    if (g > 0) sums[g - 1][q] = v;
    __syncthreads();
    if (g > 0) return;
#pragma unroll
    for (int h = 0; h < kGroups - 1; ++h) add(sums[h][q]);
  }
  if (i < quads) {
    store_pair(y + 4 * i, v.x, v.y);
    store_pair(y + 4 * i + 2, v.z, v.w);
  }
}

// `kernel` over `blocks` blocks of 256 threads on the default stream; with `overlap`, as a
// programmatic dependent launch (wait_for_previous_grid), and plainly where the runtime refuses
// that (the refusal's error cleared; tried only when no earlier error is pending, such as the
// first kernel's own launch error, so that clearing cannot hide one from the caller's check).
// Only a grid of at least half as many blocks as the device has SMs overlaps: launched while the
// first kernel's blocks hold most SMs' shared memory, a pass's blocks go to the few SMs free, as
// many on each as fit (the H200, backward-weights b32 res2a_branch2a: 32 blocks, 7% slower than
// plainly, twice; grids of 128 blocks and more 1-11% faster; docs/gpu/2026-11-30-session21).
// CONVGUARD_REDUCE_PLAIN=1 launches every such pass plainly, for measuring.
inline int env_int(const char* name, int lo, int hi, std::atomic<bool>* said = nullptr);
inline int sm_count();
template <typename... Params, typename... Values>
void launch_256(bool overlap, void (*kernel)(Params...), unsigned blocks, Values... values) {
  static const bool plain = env_int("CONVGUARD_REDUCE_PLAIN", 0, 1) == 1;
  if (overlap && !plain && 2 * static_cast<std::int64_t>(blocks) >= sm_count() &&
      cudaPeekAtLastError() == cudaSuccess) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(blocks), cfg.blockDim = dim3(256);
    cudaLaunchAttribute attr[1]{};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
    if (cudaLaunchKernelEx(&cfg, kernel, values...) == cudaSuccess) return;
    (void)cudaGetLastError();
  }
  kernel<<<blocks, 256>>>(values...);
}

// Split-K's second pass on the default stream: y = the splits' partial sums [split][elements],
// added in a fixed order (deterministic: no atomics), 4 elements per load where the count and the
// pointers allow (reduce_splits4: 8 groups of splits above 8 splits, else one). overlap: the
// first pass is a Hopper kernel that calls wg::allow_dependents, so this one may be launched as a
// programmatic dependent (launch_256), its blocks placed while that one's last blocks run instead
// of after a launch gap (ncu on the H200: this pass takes 2.6-3.5 us after 13-28 us
// backward-weights kernels; overlapped, those layers ran 1-11% faster, forward b32's split res5
// 3x3 layers 7%).
template <typename T>
void launch_reduce_splits(const float* partial, T* y, std::int64_t elements, int splits,
                          bool overlap = false) {
  const bool quads = elements % 4 == 0 && reinterpret_cast<std::uintptr_t>(partial) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(y) % (4 * sizeof(T)) == 0;
  if (!quads) {
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((elements + 255) / 256, 4096));
    launch_256(overlap, reduce_splits<T>, blocks, partial, y, elements, splits);
    return;
  }
  const std::int64_t items = elements / 4;
  auto launch = [&](auto groups) {
    constexpr int kPer = 256 / decltype(groups)::value;
    // (A grid of 2^31 - 1 blocks covers 2^36 quads: far past any workspace the plans ask for.)
    const auto blocks = static_cast<unsigned>(
        std::min<std::int64_t>((items + kPer - 1) / kPer, std::int64_t{0x7fffffff}));
    launch_256(overlap, reduce_splits4<T, decltype(groups)::value>, blocks, partial, y, items,
               splits);
  };
  if (splits > 8)
    launch(std::integral_constant<int, 8>{});
  else
    launch(std::integral_constant<int, 1>{});
}

// Facts of the current device, read once per device: a process may drive several GPUs (a library
// caller), each with its own SM count and its own function attributes (a shared-memory opt-in
// made on one GPU does not hold on another: its launches there failed). Devices past
// kCachedDevices are asked on every call.
constexpr int kCachedDevices = 64;

inline int current_device() {
  int dev = 0;
  return CG_GPU(GetDevice)(&dev) == kSuccess ? dev : -1;
}

// An integer from the environment variable `name` in [lo, hi], for measuring (the solvers' forced
// plan choices); 0 when unset or out of range (then said on stderr: every time, or once where the
// caller passes its own flag `said`, as the settings read at each plan do).
inline int env_int(const char* name, int lo, int hi, std::atomic<bool>* said) {
  const char* text = std::getenv(name);
  if (!text) return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end != text && *end == 0 && v >= lo && v <= hi) return static_cast<int>(v);
  if (!said || !said->exchange(true))
    std::fprintf(stderr, "convguard: %s='%s' ignored (%d to %d)\n", name, text, lo, hi);
  return 0;
}

// The current device's multiprocessor count (0 when unknown: no split).
inline int sm_count() {
  static std::atomic<int> cached[kCachedDevices] = {};  // 0: not read yet
  const int dev = current_device();
  if (dev < 0) return 0;
  if (dev < kCachedDevices)
    if (const int n = cached[dev].load(std::memory_order_relaxed)) return n;
  int n = 0;
  if (CG_GPU(DeviceGetAttribute)(&n, CG_GPU(DevAttrMultiProcessorCount), dev) != kSuccess) return 0;
  if (dev < kCachedDevices) cached[dev].store(n, std::memory_order_relaxed);
  return n;
}

// Lets `Kernel` launch with `bytes` of dynamic shared memory on the current device, once per
// device; a failure is not cached (the next launch asks again) and is cleared from the runtime's
// last error (else a later launch's check reported it: every run after a failed opt-in failed).
template <auto Kernel>
Error allow_dynamic_shared_memory(int bytes) {
  static std::atomic<bool> done[kCachedDevices] = {};
  const int dev = current_device();
  const bool cacheable = dev >= 0 && dev < kCachedDevices;
  if (cacheable && done[dev].load(std::memory_order_acquire)) return kSuccess;
  const Error e =
      CG_GPU(FuncSetAttribute)(Kernel, CG_GPU(FuncAttributeMaxDynamicSharedMemorySize), bytes);
  if (e == kSuccess && cacheable) done[dev].store(true, std::memory_order_release);
  if (e != kSuccess) (void)CG_GPU(GetLastError)();  // not the next launch's error
  return e;
}

inline bool dense_channels_last(const TensorDesc& d) {
  // Logical order N, C, (D,) H, W; dense NHWC strides are H*W*C, 1, W*C, C (NDHWC: D*H*W*C, 1,
  // H*W*C, W*C, C).
  if (d.rank != 4 && d.rank != 5) return false;
  std::int64_t expected = d.dims[1];
  if (d.strides[1] != 1) return false;
  for (int i = d.rank - 1; i >= 2; --i) {
    if (d.strides[i] != expected) return false;
    expected *= d.dims[i];
  }
  return d.strides[0] == expected;
}

// cp.async and 16-byte stores need 16-byte-aligned tensors and workspace (trial, plan and transform
// buffers are; a library caller's offset pointer may not be): refused with `id`'s name, not
// faulted.
inline Status require_aligned16(const ConvTensors& t, const void* ws, const char* id) {
  const void* const pointers[] = {t.x.data, t.w.data, t.y.data, ws};
  for (const void* ptr : pointers)
    if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      return {StatusCode::invalid_argument,
              std::string(id) + ": x, w, y and the workspace must be 16-byte aligned"};
  return Status::ok();
}

// What every tensor-core solver needs of a problem's shape and layout (1D, 2D or 3D: each has its
// kernels' k3D form): one group, dense NHWC (NDHWC) x and y and KRSC (KTRSC) w; else
// not_applicable with the reason. The implicit GEMMs' backward-data: backward_data_fits.
inline Status dense_one_group(const Problem& p) {
  if (p.g != 1) return not_applicable("one group only");
  if (!dense_channels_last(x_desc(p)) || !dense_channels_last(w_desc(p)) ||
      !dense_channels_last(y_desc(p)))
    return not_applicable("needs dense NHWC x and y and KRSC w (--stag=axb --wtag=axb --dtag=axb)");
  return Status::ok();
}

}  // namespace convguard::gpu::tc
