// gpu:simt_gemm: a SIMT (CUDA-core, exact fp32 FMA, no TF32) implicit GEMM for f32 forward,
// stride-1 backward-data and backward-weights 2D convolution, tuned for NCHW. GEMM view: M = K
// output channels (rows of w, read as K x C*R*S), N = the N*OH*OW output pixels (columns),
// reduction C*R*S in (c, r, s) order, so y[n][k][p] = sum_red w[k][red] * im2col(x)[red][n, p]. On
// NCHW a 1x1 stride-1 layer is a plain GEMM whose B rows are contiguous pixels.
//
// A block of 256 threads computes a 128 x 128 tile (each thread 8 x 8: two 4-row and two 4-column
// groups 64 apart, outer-product FMAs from float4 shared-memory reads), the reduction in steps of
// 8 through two shared-memory buffers: the next step's operands are loaded into registers while
// the current one is computed, then stored to the other buffer (one barrier a step). w rows are
// read as float4 along the reduction (scalars when C*R*S or the row stride is not a multiple of
// 4); B is read as float4 along the pixels for 1x1 stride-1 unpadded layers whose images are a
// whole number of float4 (OH*OW % 4 == 0, contiguous pixels), else gathered element by element
// (a tap table in shared memory; each thread's four columns are decomposed once, the reduction
// position advances by carries: no divisions in the loop). Layers whose tiles would leave SMs
// idle split the reduction over blockIdx.z: fp32 partials, then a kernel that adds them in split
// order (deterministic). The output is stored as float4 where the pixels allow, else element-wise.
//
// Backward-data with stride 1 (any dilation and padding) is the same kernel on the forward
// convolution of dy with the filter flipped in R and S and K and C swapped (written to the
// workspace each run by a small kernel), padded dil*(R-1) - pad_begin, its output dx.
//
// Backward-weights (simt_gemm_bwdw.cu) is the same tile on dw[k][(c, r, s)] = sum over pixels of
// dy * im2col(x), both operands loaded along the pixels, the pixels split over blocks.
//
// Declines (each with its reason): strided backward-data, dtypes other than f32, 3D, groups,
// forward and backward-weights filters not dense along (c, r, s), more than 256 taps, tensors
// whose offsets exceed 32-bit ints.
#pragma once

#include <memory>

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

namespace simt {
// Backward-weights (simt_gemm_bwdw.cu): its plan, workspace and launch.
std::unique_ptr<Plan> bwd_weights_plan(const Problem& p);
std::size_t bwd_weights_workspace(const Plan& plan);
[[nodiscard]] Status run_bwd_weights(const Plan& plan, const ConvTensors& t,
                                     std::span<std::byte> ws);
}  // namespace simt

class SimtGemmSolver final : public GpuSolver {
 public:
  std::string_view id() const override { return "gpu:simt_gemm"; }
  Status check(const Problem& p) const override;
  // Backward-data's flipped filter, then split-K's fp32 partials (0 for a forward problem whose
  // tiles fill the GPU unsplit).
  Result<std::size_t> workspace_bytes(const Problem& p) const override;
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
};

}  // namespace convguard::gpu
