// gpu:implicit_gemm: SIMT implicit GEMM (CUDA cores, fp32 accumulation) for every direction, 2D and
// 3D, any strides, f32/f16/bf16. Each direction is one GEMM whose operands are gathered on the fly
// (no im2col buffer): forward M = N*OD*OH*OW pixels x N = K/G channels over C/G*taps; backward-data
// M = N*ID*IH*IW x N = C/G over K/G*taps (taps that do not land on the stride grid read zero);
// backward-weights M = K/G x N = C/G*taps over N*OD*OH*OW. Groups are the grid's z dimension.
#pragma once

#include "gpu/gpu_solver.hpp"

namespace convguard::gpu {

// The forward kernel (implicit_gemm_forward.cu): larger tiles, register-staged operands and a
// division-free gather; used where its 32-bit indexing and tap table fit, else the generic one.
bool forward_tiled_applies(const Geometry& G, Direction d);
[[nodiscard]] Status launch_forward_tiled(const Geometry& G, DType dt, const ConvTensors& t);

class ImplicitGemmSolver final : public GpuSolver {
 public:
  std::string_view id() const override { return "gpu:implicit_gemm"; }
  Status check(const Problem& p) const override;
  Status run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const override;
};

}  // namespace convguard::gpu
