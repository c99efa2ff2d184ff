// cpu:nchw_gemm:{avx512_bf16,avx512,avx2} — convolutions as GEMMs on channels-first tensors,
// read and written where the caller holds them (groups, 1D/2D/3D):
//   forward, any filter: y[n][k][p] = sum over c, taps t of w[k][c][t] * x[n][c][p@t]
//   backward-data, 1x1:  dx[n][c][p@s] = sum_k w[k][c] * dy[n][k][p]  (zero where no p lands)
// where p@t is the input element tap t of output pixel p reads (x zero-padded beyond 1x1, so that
// it is p's first element plus t's offset) and p@s output pixel p's input pixel. For an NCHW
// caller this needs no layout change at all, while the channels-last families transpose x in and
// y out: on ResNet-50's 1x1 layers those copies cost about as much as the GEMM (docs/perf.md), and
// first layers (C = 3) have too few channels to vectorise over. A channels-last caller is staged
// to channels-first, so there cpu:implicit_gemm usually wins and is selected.
// The bf16 variant (vdpbf16ps) reads and writes the caller's dense channels-first bf16 tensors
// with nothing staged; so does the avx512 variant (on CPUs with AVX512BW and VL), widening them to
// fp32 as it packs panels, for CPUs without AVX512_BF16. Other bf16 callers (channels-last,
// explicit strides) and the avx2 variant take bf16 staged to fp32 like every fp32 family.
// Backward-weights (bf16 variant only; stride 1, no padding): dW[k][c] = sum_p dy[n][k][p] *
// x[n][c][p], dot products along both tensors' rows (nchw_gemm_bwdw_kernels.hpp). The fp32
// variants decline it: the same loop is load-bound in fp32 and cpu:bwdw is faster.
#pragma once

#include "cpu/isa.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

enum class NchwGemmKernel { f32_avx512, f32_avx2, bf16_avx512 };

class NchwGemmSolver final : public StagedSolver {
 public:
  explicit NchwGemmSolver(NchwGemmKernel kernel) : kernel_(kernel) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  NchwGemmKernel kernel_;
};

}  // namespace convguard::cpu
