// gpu:tc_implicit_gemm (CUDA, sm_80+): tensor-core implicit GEMM for forward and (stride 1)
// backward-data 2D convolution in f16/bf16 with fp32 accumulation (and, as
// gpu:tc_implicit_gemm:tf32, f32 in TF32), dense NHWC x and y and KRSC filters, one group.
//
// GEMM view: M = N*OH*OW output pixels, N = K output channels, reduction R*S*C in (r, s, c) order,
// so each 8-channel run is one 16-byte load from both x and w (hence C % 8 == 0 and K % 8 == 0).
// A 128x128 output tile per block of 4 warps (each 64x64), K in steps of 32 through three
// shared-memory stages filled by cp.async (zero-fill for padding and edges), fragments by
// ldmatrix from an XOR-swizzled layout (no bank conflicts), mma.sync m16n8k16; the reduction
// position (r, s, c) advances incrementally, so the main loop has no integer divisions. Layers
// whose output tiles would leave SMs idle split the reduction (fp32 partials, then a reduction).
//
// Backward-data with stride 1 and dilation 1 runs the same kernel: dx is the forward convolution
// of dy with the filter flipped in R and S and with K and C swapped (w'[c][r][s][k] =
// w[k][R-1-r][S-1-s][c], KRSC for a forward problem of K input and C output channels), padded
// R-1-pad_begin at the beginning (so pad_begin <= R-1, S-1) and sized so the output is H x W.
// Each run writes w' into the workspace with a small transposing kernel, then launches the
// forward tiles on that geometry (reduction R*S*K, GEMM M = N*H*W, N = C).
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class TcImplicitGemmSolver final : public GpuSolver {
 public:
  // tf32: the variant for f32 problems (`gpu:tc_implicit_gemm:tf32`): f32 tiles, operands rounded
  // to TF32, mma.sync m16n8k8, 16 reduction elements per stage; its tolerance allows the
  // operands' rounding (Accuracy::operand_roundoff), so it is never mistaken for fp32-accurate.
  explicit TcImplicitGemmSolver(bool tf32 = false) : tf32_(tf32) {}
  std::string_view id() const override;
  Status check(const Problem& p) const override;
  Accuracy accuracy(const Problem& p) const override;
  // Backward-data's flipped filter, then split-K's fp32 partial sums when the output alone
  // would not fill the GPU; 0 for a forward problem that is not split.
  Result<std::size_t> workspace_bytes(const Problem& p) const override;
  // Launch arguments, tile width and split computed once.
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;

 private:
  bool tf32_;
};

}  // namespace convguard::gpu
