// gpu:wgmma_implicit_gemm (CUDA, Hopper sm_90 only; the kernel is sm_90a code): forward and
// backward-data 1D/2D/3D convolution in f16/bf16 (and, as gpu:wgmma_implicit_gemm:tf32, f32 in
// TF32) with fp32 accumulation on the warpgroup tensor-core instructions (wgmma), dense NHWC
// (NDHWC) x and y and KRSC (KTRSC) filters, one group.
//
// GEMM view as gpu:tc_implicit_gemm's: M = N*OH*OW output pixels, N = K output channels, reduction
// R*S*C in (r, s, c) order (each tap's channels padded to a 16-byte chunk, 8 16-bit or 4 f32
// elements, with zeros). A block of two warpgroups computes a BM-pixel x BN-channel tile (128 x 64,
// 128 x 128, 128 x 256 or 256 x 128, chosen per layer), each warpgroup BM / 2 rows with wgmma
// m64nBNk16 (TF32: k8) from shared memory; the reduction advances one 128-byte row per tile row
// (64 16-bit or 32 f32 elements, 128-byte swizzle) per stage through a 4- to 7-stage cp.async
// pipeline (zero-fill for padding and edges), and the tile leaves through shared memory in
// 16-byte stores. Channel counts that are not multiples of 8 (C = 3 first layers, odd K) take a
// ragged variant (16-bit types only): element-wise loads stored to shared memory,
// element-wise stores. Long reductions of very few tiles split in 2 (fp32 partials, then a sum).
//
// Backward-data (dilation 1) runs the same kernel, planned as gpu:tc_implicit_gemm plans its own
// (tc::stride_phases, tc_bwd_data_strided.cu): at stride 1, dx is the forward convolution of dy
// (K channels) with the filter flipped in R and S and with K and C swapped (w'[c][r][s][k] =
// w[k][R-1-r][S-1-s][c]), padded R-1-pad_begin (negative: dy rows skipped), sized H x W; with
// stride sh x sw, dx splits into sh*sw stride phases, each a stride-1 forward convolution of dy
// with a flipped sub-filter, all in one launch (kernel variant kPhased, blockIdx.z the phase, no
// split) writing their pixels on dx's stride grid. Where K % 64 == 0 and C % 8 == 0 (every
// ResNet-50 layer but conv1) the kernel reads the caller's KRSC filter in place: a stage's filter
// tile is 64 dy channels k of one tap of the flipped (sub-)filter, rows w[k][tap][c..] that run
// along dx's channels, which wgmma takes as an MN-major B operand (its transpose-B immediate), so
// there is no flipped copy and no workspace for it. Other shapes first write the flipped
// (sub-)filters into the workspace (its first bytes; split-K's partials follow) with tc's
// transposing kernel (tc::forward_operands), once per run.
//
// Loads: in the two-warpgroup kernel the computing warps load their own stages (cp.async, one
// block barrier per stage). A warp-specialised kernel (a producer warpgroup feeding the two
// through mbarriers; plain, persistent and cluster/TMA-multicast variants) with cp.async loaders
// ties or loses to it at the same tiles on ResNet-50 (docs/gpu/2026-11-25-wsfwd). Its bulk-copy
// form (2D, taps of whole 128-byte stage rows: forward in 16-bit and TF32, and 16-bit stride-1
// backward-data reading the filter in place)
// loads A with the TMA unit's im2col copies and B with tiled ones, one thread issuing both per
// stage, and is 5-24% faster than the two-warpgroup kernel on most ResNet-50 layers it fits
// (docs/gpu/2026-11-27-tma), so plans of 128 x 64 tiles with long reductions, of 128 x 128 tiles,
// and short reductions of larger tiles take it (tma_ws_for in wgmma_tiles.cuh). Strided
// backward-data reading the filter in place (16-bit 2D, at most 4 stride phases: stride 2 x 2)
// takes its persistent form walking every phase's tiles in one list, longest reductions first,
// each phase's dy through an im2col map of its own, the tiles of phases no tap reaches stored as
// zeros by the producer's idle warps while the consumers multiply (wgmma_plan.cuh:
// phased_bulk_fits, phased_bulk_allowed): 1.10-1.51x faster than the phased grid of the
// two-warpgroup kernel on ResNet-50's six stride-2 layers on the H200
// (docs/gpu/2026-11-29-session17).
//
// 3D (dense NDHWC, KTRSC filters), forward and backward-data (dilation 1): the two-warpgroup
// kernel's k3D form (the 2D tile rules; ragged and phased plans 128 x at most 128), GEMM rows over
// (n, od, oh, ow) and tap rows over (t, r) (tc::Depth); at stride 1 backward-data's flip of (t, r)
// is the flip of the combined tap row, so the filter is read in place or flipped as in 2D; strided,
// the sd*sh*sw stride phases (tc::PhaseDepth) run phased on tc's flipped sub-filters (a phase's tap
// row steps back by two strides, so the in-place read does not apply).
//
// Offered only on an sm_90 device and when the binary holds the kernel's sm_90a code. Declined,
// with the reason: dilated backward-data and more than 16 stride phases (gpu:implicit_gemm),
// backward-weights (gpu:wgmma_bwd_weights, gpu:tc_bwd_weights, 2D and 3D), groups
// (gpu:implicit_gemm).
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class WgmmaImplicitGemmSolver final : public GpuSolver {
 public:
  // tf32: the variant for f32 problems (`gpu:wgmma_implicit_gemm:tf32`): the same kernel on fp32
  // stages (32 elements a 128-byte row, 4 a chunk), wgmma m64nNk8 TF32 reading each operand's top
  // 19 bits (so its tolerance allows truncation, kTf32TruncatedRoundoff), the two-warpgroup kernel
  // with the 2D tile rules (no warp-specialised form), C and K multiples of 4, backward-data on
  // the flipped filter copy (TF32 operands are K-major only).
  explicit WgmmaImplicitGemmSolver(bool tf32 = false) : tf32_(tf32) {}
  std::string_view id() const override;
  Accuracy accuracy(const Problem& p) const override;
  Status check(const Problem& p) const override;
  // Backward-data's flipped filter (where it is not read in place), then split-K's fp32 partial
  // sums when the output tiles alone would not fill the GPU; 0 for an unsplit problem otherwise.
  Result<std::size_t> workspace_bytes(const Problem& p) const override;
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
  // The kernel its plan of `p` takes: "phased walk" (strided backward-data's persistent bulk-copy
  // walk over the stride phases), "phased grid" (the two-warpgroup kernel's grid of them),
  // "pixel-wide", "persistent bulk copies" (ws 5, its tiles stored by bulk copies), "persistent
  // bulk copies, thread stores" (ws 5, stored by the threads), "bulk copies" (a tile per block),
  // "bulk copies, splits in clusters" (a tile per block, its splits summed in a cluster),
  // "warp-specialised" or "two warpgroups"; empty where it declines
  // `p`. For tests, which must know which kernel their shapes reached
  // (gpu::wgmma_implicit_gemm_kernel). Needs the device (the plan reads its SM count).
  static std::string_view kernel(const Problem& p);
  // Its plan's tiles and split: "BM x BN tiles, split S" (S = 1 unsplit; phased plans too) or
  // "pixel-wide, W pixels"; empty where it declines `p`. For tests, as kernel().
  static std::string tiles(const Problem& p);

 private:
  bool tf32_;
};

}  // namespace convguard::gpu
