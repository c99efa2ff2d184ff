// cpu:pointwise:{avx512_bf16,avx512,avx2} — 1x1 convolutions (any stride and padding, groups,
// 1D/2D/3D) as GEMMs on channels-first tensors, read and written in place:
//   forward:       y[n][k][p]        = sum_c w[k][c] * x[n][c][p@s]
//   backward-data: dx[n][c][p@s]     = sum_k w[k][c] * dy[n][k][p]   (zero where no p lands)
// where p@s is output pixel p's input pixel. For an NCHW caller a 1x1 convolution needs no
// layout change at all, while the channels-last families transpose x in and y out: on ResNet-50's
// 1x1 layers those copies cost about as much as the GEMM (docs/perf.md). A channels-last caller
// is staged to channels-first, so there cpu:implicit_gemm usually wins and is selected.
// The bf16 variant (vdpbf16ps) reads and writes the caller's dense channels-first bf16 tensors
// with nothing staged; the fp32 variants take bf16 staged to fp32 like every fp32 family.
// Backward-weights (bf16 variant only; stride 1, no padding): dW[k][c] = sum_p dy[n][k][p] *
// x[n][c][p], dot products along both tensors' rows (pointwise_bwdw_kernels.hpp). The fp32
// variants decline it: the same loop is load-bound in fp32 and cpu:bwdw is faster.
#pragma once

#include "cpu/isa.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

enum class PointwiseKernel { f32_avx512, f32_avx2, bf16_avx512 };

class PointwiseSolver final : public StagedSolver {
 public:
  explicit PointwiseSolver(PointwiseKernel kernel) : kernel_(kernel) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  PointwiseKernel kernel_;
};

}  // namespace convguard::cpu
