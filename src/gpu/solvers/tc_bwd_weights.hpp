// gpu:tc_bwd_weights (CUDA, sm_80+): tensor-core implicit GEMM for backward-weights of 2D and 3D
// (the kernel's k3D form: pixels over (n, od, oh, ow), columns over (t, r, s, c), tc::Depth)
// convolution in f16/bf16 (and f32 as TF32: the `:tf32` variant) with fp32 accumulation, dense NHWC
// (NDHWC) x and dy and KRSC (KTRSC) dw, one group, any channel counts (C and K not multiples of a
// 16-byte chunk's 8 16-bit or 4 f32 values, C = 3 first layers: the ragged variant, with each
// tap's channels zero-padded to a chunk and element-wise loads and stores); any stride, dilation
// and padding.
//
// GEMM view: dw[K][R*S*C] = sum over the N*OH*OW output pixels p of dy[p][k] * im2col(x)[p][rsc].
// Both operands are contiguous along their output dimension (dy along k, x along c), so a stage
// holds a run of pixels x 128 columns of each (32 pixels of 16-bit values, 16 of f32: 16 KiB),
// loaded by cp.async in 16-byte chunks (zero-filled for padding and edges); ldmatrix.trans turns
// 16-bit ones into the mma.sync m16n8k16 fragments, and each thread reads its m16n8k8 TF32
// fragment elements one by one (ldmatrix moves 16-bit elements only). A 128x128 tile of dw per
// block of 4 warps (each 64x64). The output is small and the reduction long, so the reduction is
// split over blockIdx.z into fixed ranges of pixels; each split writes its own fp32 partial sums
// and a second kernel adds them in split order: the result does not depend on scheduling
// (deterministic, no atomics).
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

class TcBwdWeightsSolver final : public GpuSolver {
 public:
  // tf32: the variant for f32 problems (`gpu:tc_bwd_weights:tf32`): f32 stages of 16 pixels, each
  // thread's fragment elements read one by one from shared memory (ldmatrix.trans moves 16-bit
  // elements only) and rounded to TF32, mma.sync m16n8k8; C and K not multiples of 4 take the
  // ragged variant; its tolerance allows the operands' rounding (Accuracy::operand_roundoff).
  explicit TcBwdWeightsSolver(bool tf32 = false) : tf32_(tf32) {}
  std::string_view id() const override;
  Status check(const Problem& p) const override;
  Accuracy accuracy(const Problem& p) const override;
  // The splits' fp32 partial sums (0 when one split covers the reduction).
  Result<std::size_t> workspace_bytes(const Problem& p) const override;
  Result<std::unique_ptr<Plan>> plan(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;

 private:
  bool tf32_;
};

}  // namespace convguard::gpu
