// gpu:wgmma_bwd_weights (CUDA, Hopper sm_90 only; the kernel is sm_90a code): backward-weights of
// 1D/2D/3D convolution in f16/bf16 with fp32 accumulation on the warpgroup tensor-core
// instructions (wgmma), dense NHWC (NDHWC) x and dy and KRSC (KTRSC) dw, one group; any stride,
// dilation and padding. C not a multiple of 8 with K one (C = 3 first layers) in 1D/2D runs on x
// padded to 8-channel chunks in the workspace, its dw taken from a padded one there (pads_channels
// in wgmma_bwd_weights.cu); K not a multiple of 8 takes the kernel's kRagged form, whose loads go
// element by element (zero-filled) instead of by 16-byte chunks (slower than gpu:tc_bwd_weights
// on conv1: 0.51 against 0.34 ms at b32 on the H200, which the selection sees); 3D ones with
// either are declined to gpu:tc_bwd_weights. 3D: the kernel's k3D form (pixels over (n, od, oh,
// ow), columns over (t, r, s, c), tc::Depth).
//
// GEMM view as gpu:tc_bwd_weights': dw[K][R*S*C] = sum over the N*OH*OW output pixels p of
// dy[p][k] * im2col(x)[p][rsc]. Both operands are contiguous along their output dimension (dy
// along k, x along c), so a stage holds 64 pixels of each as rows of 128-byte swizzled atoms (64
// channels or columns wide), loaded by cp.async in 16-byte chunks (zero-filled for padding, edges
// and tails), and wgmma reads them MN-major (its operand transposition, 16-bit types only). A
// block of two warpgroups computes a 128 x 128 tile of dw (each warpgroup 64 rows, m64n128k16)
// through a 7-stage cp.async pipeline. When the tiles leave SMs idle the reduction is split over
// blockIdx.z into fixed ranges of pixels so that the blocks fill the GPU (the plan's rule:
// wgmma_bwd_weights.cu, BwdwPlan). Where K and R*S*C are at least 128 the splits of a tile run
// as thread-block clusters of 2 or 3 and add their sums through distributed shared memory;
// otherwise, and between clusters, each writes fp32 partial sums and a second kernel adds them.
// Every sum in a fixed order: deterministic, no atomics. 2D problems whose C is a multiple of 64
// and whose strides, taps and padding the im2col copies can walk load by bulk tensor copies
// instead (TMA: dy by tiled copies, x by im2col copies), issued by one producer thread of a third
// warpgroup (wgmma_bwd_weights_tma.cuh), with the same splits, clusters and epilogues and tiles
// 128, 192 or 256 columns wide (the plan's count of work); where those would keep 128-wide tiles
// of more than one and at most two per SM, the cp.async kernel's 32-pixel plan stays.
#pragma once

#include <string_view>

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class WgmmaBwdWeightsSolver final : public GpuSolver {
 public:
  std::string_view id() const override { return "gpu:wgmma_bwd_weights"; }
  Status check(const Problem& p) const override;
  // The splits' fp32 partial sums (0 when one split covers the reduction), and with C padded to
  // 8-channel chunks the padded x and dw.
  Result<std::size_t> workspace_bytes(const Problem& p) const override;
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
  // The loader its plan of `p` takes: "bulk copies" (the warp-specialised kernel of
  // wgmma_bwd_weights_tma.cuh) or "cp.async"; empty where it declines `p`. For tests, which must
  // know which kernel their shapes reached (gpu::wgmma_bwd_weights_loader). Needs the device (the
  // plan reads its SM count).
  static std::string_view loader(const Problem& p);
};

}  // namespace convguard::gpu
