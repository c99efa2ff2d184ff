// gpu:tc_implicit_gemm (CUDA, sm_80+): tensor-core implicit GEMM for forward and backward-data
// 2D convolution in f16/bf16 with fp32 accumulation (and, as gpu:tc_implicit_gemm:tf32, f32 in
// TF32), dense NHWC x and y and KRSC filters, one group; also 3D forward and backward-data
// (dense NDHWC, KTRSC filters: the kernel's k3D form, GEMM rows over (n, od, oh, ow) and the
// reduction's tap rows over (t, r), tc::Depth in tc_implicit_gemm_args.cuh; at stride 1 the flip of
// (t, r) is the flip of the combined tap row; strided, stride phases over depth, rows and columns,
// each phase's depth in tc::PhaseDepth).
//
// GEMM view: M = N*OH*OW output pixels, N = K output channels, reduction R*S*C in (r, s, c) order,
// so when C is a multiple of a 16-byte chunk (8 f16/bf16, 4 f32) each chunk is one 16-byte load
// from both x and w. A 128x128 output tile per block of 4 warps (each 64x64), K in steps of 32
// through four shared-memory stages filled by cp.async (zero-fill for padding and edges),
// fragments by ldmatrix from an XOR-swizzled layout (no bank conflicts), mma.sync m16n8k16; the
// reduction position (r, s, c) advances incrementally, so the main loop has no integer divisions.
// Layers whose output tiles would leave SMs idle split the reduction (fp32 partials, then a
// reduction).
//
// Any other channel count (C = 3 first layers, C = 20, an odd K) takes the ragged variant, chosen
// per plan: each tap's channels are zero-padded to a whole chunk, chunks are loaded element by
// element into registers during the previous stage's mma and stored to shared memory after it,
// and the output is stored element by element. Aligned problems keep the cp.async kernel.
//
// Backward-data runs the same kernel: dx is the forward convolution of dy with the filter flipped
// in R and S and with K and C swapped (w'[c][r][s][k] = w[k][R-1-r][S-1-s][c], KRSC for a forward
// problem of K input and C output channels), padded R-1-pad_begin at the beginning (negative:
// dy rows skipped) and sized so the output is H x W. With stride sh x sw (dilation 1) dx splits
// into sh*sw stride phases (3D: sd*sh*sw), at most 16, each a stride-1 forward convolution of dy
// with a flipped sub-filter (tc_bwd_data_strided.cu), all in one launch (blockIdx.z: the phase)
// writing their pixels on dx's stride grid. Each run first writes the (sub-)filters into the
// workspace with a small transposing kernel.
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
