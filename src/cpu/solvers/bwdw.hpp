// cpu:bwdw:{avx512,avx2} — backward-weights only: an own implicit-GEMM kernel reducing over the
// N*OD*OH*OW output pixels with no im2col buffer. Channels-last x (zero padding materialised)
// or, for 1x1 filters of NCHW callers, channels-first x packed per chunk; dy as the caller has
// it (channels-first read in place, channels-last packed per chunk). dW is produced as
// [K][taps][Cg] (the channels-last filter; in place for 1x1 filters in any layout). A register
// tile of 4 (or 2) vectors of x values x 6 (or 12; AVX2: 2 x 6) output channels accumulates over
// chunks of 256 pixels; work is split over (group, channel blocks) so no two threads write the
// same dW element and no atomics are needed; when that gives too few items (small dW), the
// pixels are split too into slices with their own partial sums, added in a fixed order. Same bits
// on every run and every thread count. See bwdw_entry.hpp (work shape), bwdw_kernels.hpp.
#pragma once

#include "cpu/isa.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class BwdwSolver final : public StagedSolver {
 public:
  explicit BwdwSolver(Isa isa) : isa_(isa) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  Isa isa_;
};

}  // namespace convguard::cpu
