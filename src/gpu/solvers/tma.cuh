// The Hopper bulk tensor copy (TMA) as the wgmma solvers use it (sm_90a code): the copies one
// producer thread issues (a tiled 2D box, an im2col box of consecutive output pixels of one tap),
// completing on an mbarrier that expects their bytes, and the host's tensor maps that describe
// them (encoded through the driver's entry points, reached through the runtime: nothing links
// libcuda). Shared by gpu:wgmma_implicit_gemm's bulk-copy loaders (wgmma_ws_forward.cuh,
// wgmma_pixel_wide.cuh) and gpu:wgmma_bwd_weights' (wgmma_bwd_weights_tma.cuh).
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: nothing of the driver is linked)
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/wgmma_ptx.cuh"

namespace convguard::gpu::tma {

// Every box is one 128-byte swizzle row wide: 64 16-bit or 32 f32 elements.
constexpr int kRowBytes = 128;
template <typename T>
constexpr int kRowElems = kRowBytes / static_cast<int>(sizeof(T));

// One arrival on `bar` that also expects `bytes` of bulk copies to complete on it this phase.
// A copy counts its whole box, the zeros it fills past the tensor's edges included.
__device__ __forceinline__ void mbar_arrive_expect(std::uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
// Makes this thread's earlier mbarrier.init visible to the async proxy (the bulk copies that
// complete on the barriers) and to the cluster, before the block barrier that hands them over.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// The stage barriers of a kernel whose one producer thread issues each stage's bulk copies and
// whose two consumer warpgroups release each stage (8 bytes each, `stages` apart from `full` and
// `empty`): full[s] completes on the producer's expect_tx arrival and its copies' bytes, empty[s]
// on one arrival per consumer warp. Thread 0 initialises them and fences them for the async proxy;
// the caller's block barrier then hands them to the other threads.
__device__ __forceinline__ void init_stage_barriers(std::uint32_t full, std::uint32_t empty,
                                                    int stages) {
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) {
    wg::mbar_init(full + 8 * s, 1);
    wg::mbar_init(empty + 8 * s, 8);
  }
  fence_mbarrier_init();
}

// The box at (c0 elements along a row, c1 rows) of a tiled map into `dst`, completing on `bar`.
__device__ __forceinline__ void tma_tile(std::uint32_t dst, const CUtensorMap& map, int c0, int c1,
                                         std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
// The im2col box of an NHWC map (im2col_map): the map's box of consecutive output pixels of one
// tap (off_w, off_h: the tap's offsets from a window's corner, dilation included), one 128-byte
// row of channels from c each, the walk starting at the window whose corner is (w, h) of image n
// and running along W, then H, then N; pixels in the padding or past the last image are zeros.
__device__ __forceinline__ void tma_im2col(std::uint32_t dst, const CUtensorMap& map, int c, int w,
                                           int h, int n, int off_w, int off_h, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar),
      "h"(static_cast<unsigned short>(off_w)), "h"(static_cast<unsigned short>(off_h))
      : "memory");
}

// The bulk tensor store: the box at `src` (shared memory, the map's swizzled layout) to (c0
// elements along a row, c1 rows) of a tiled map; elements past the tensor's edges are not
// written. The issuing thread commits its stores as a group (bulk_commit) and waits for them
// (bulk_wait_read: until they have read shared memory, which may then be written again;
// bulk_wait: until they are done). Writes to `src` through generic stores must be made visible to
// the async proxy first (fence.proxy.async, then a barrier to the issuing thread).
__device__ __forceinline__ void tma_store_tile(const CUtensorMap& map, std::uint32_t src, int c0,
                                               int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(&map)),
      "r"(c0), "r"(c1), "r"(src)
      : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// The driver's function `name` (CUDA 12 ABI) through the runtime; null when the driver has none.
template <typename Fn>
inline Fn driver_entry(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(p);
}
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
inline EncodeTiled encode_tiled() {
  static const EncodeTiled fn = driver_entry<EncodeTiled>("cuTensorMapEncodeTiled");
  return fn;
}
using EncodeIm2col = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                  const cuuint64_t*, const cuuint64_t*, const int*, const int*,
                                  cuuint32_t, cuuint32_t, const cuuint32_t*, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill);
inline EncodeIm2col encode_im2col() {
  static const EncodeIm2col fn = driver_entry<EncodeIm2col>("cuTensorMapEncodeIm2col");
  return fn;
}

// The tensor maps' element type.
template <typename T>
constexpr CUtensorMapDataType map_type() {
  if constexpr (std::is_same_v<T, cg_bf16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

// A 2D tiled tensor map over `base`: `rows` rows of `cols` elements (dense), boxes of one
// 128-byte swizzled row x box_rows rows; past either end the copy fills zeros. `who` names the
// solver in the error.
template <typename T>
inline Status tiled_map(const void* base, int cols, int rows, int box_rows, CUtensorMap* map,
                        std::string_view who) {
  const EncodeTiled encode = encode_tiled();
  if (!encode)
    return {StatusCode::internal_error, std::string(who) + ": no cuTensorMapEncodeTiled"};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(T)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kRowElems<T>),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = encode(map, map_type<T>(), 2, const_cast<void*>(base), dims, strides, box,
                            unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return {StatusCode::internal_error,
            std::string(who) + ": cuTensorMapEncodeTiled failed (" + std::to_string(r) + ")"};
  return Status::ok();
}

// An NHWC activation's 2D geometry as the im2col walk sees it: x's extent, the output grid the
// windows' corners run over, and the convolution's padding (at the start) and strides.
struct Walk {
  int n, h, w, c;  // x
  int oh, ow;      // output pixels per image
  int ph, pw, sh, sw;
};
// The corners of the im2col walk over one image, W then H: the windows' corners run from -pad to
// -pad + (out - 1) * stride, which the map takes relative to the tensor's edges (lower: -pad;
// upper: that last corner less in - 1, the walk's last position inclusive; checked on the H100:
// one more or one less fails every strided and padded problem, docs/gpu/2026-11-27-tma/tma
// adj*.log). 4D maps take corners in [-128, 127].
struct Im2colBox {
  int lower[2], upper[2];  // {w, h}
  bool fits() const {
    for (int v : {lower[0], lower[1], upper[0], upper[1]})
      if (v < -128 || v > 127) return false;
    return true;
  }
};
inline Im2colBox im2col_box(const Walk& g) {
  return {{-g.pw, -g.ph},
          {-g.pw + (g.ow - 1) * g.sw - (g.w - 1), -g.ph + (g.oh - 1) * g.sh - (g.h - 1)}};
}
// Whether the im2col copies can walk `g` with taps reaching (R - 1) dh rows and (S - 1) dw
// columns from a corner: the map's element strides are 1 to 8, a 4D copy's offsets 0 to 255, and
// its corners im2col_box's range.
inline bool im2col_fits(const Walk& g, int reach_h, int reach_w) {
  return g.sh >= 1 && g.sh <= 8 && g.sw >= 1 && g.sw <= 8 && reach_h <= 255 && reach_w <= 255 &&
         im2col_box(g).fits();
}

// x (NHWC, C a multiple of a 128-byte row) as an im2col tensor map: `pixels` output pixels x one
// 128-byte row of channels a copy, 128-byte swizzle, the walk's element strides the convolution's.
template <typename T>
inline Status im2col_map(const void* x, const Walk& g, int pixels, CUtensorMap* map,
                         std::string_view who) {
  const EncodeIm2col encode = encode_im2col();
  if (!encode)
    return {StatusCode::internal_error, std::string(who) + ": no cuTensorMapEncodeIm2col"};
  const auto e = static_cast<cuuint64_t>(sizeof(T));
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(g.c), static_cast<cuuint64_t>(g.w),
                              static_cast<cuuint64_t>(g.h), static_cast<cuuint64_t>(g.n)};
  const cuuint64_t strides[3] = {dims[0] * e, dims[0] * dims[1] * e,
                                 dims[0] * dims[1] * dims[2] * e};
  const Im2colBox box = im2col_box(g);
  const cuuint32_t unit[4] = {1, static_cast<cuuint32_t>(g.sw), static_cast<cuuint32_t>(g.sh), 1};
  const CUresult r =
      encode(map, map_type<T>(), 4, const_cast<void*>(x), dims, strides, box.lower, box.upper,
             static_cast<cuuint32_t>(kRowElems<T>), static_cast<cuuint32_t>(pixels), unit,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return {StatusCode::internal_error,
            std::string(who) + ": cuTensorMapEncodeIm2col failed (" + std::to_string(r) + ")"};
  return Status::ok();
}

}  // namespace convguard::gpu::tma
