// cpu:fwd_rows:{avx512,avx2,avx512_bf16} and cpu:bwdd_rows:{...} — forward and backward-data
// (any stride) as dot products along output rows, on channels-first tensors. Both are one
// computation (rows_conv_kernels.hpp): an output row of a block of output channels is a sum over
// (input channel, tap) of a filter value times a run of the zero-padded input. Forward: output
// y, input x padded by the padding. Backward-data: output dx, input dy padded by (dilated filter
// extent - 1 - padding), the filter flipped and its channel roles swapped. The vectors run along
// the output row, so a few channels fill every lane (a first layer's 3 dx channels: 3 x 8
// vectors per tile on AVX-512, 3 x 3 on AVX2) and each input load serves every channel of the tile.
// A forward stride splits each windowed input row into column phases (rows_conv_entry.hpp), so a
// strided first layer (7 x 7, stride 2) runs the same tiles. A backward-data stride splits dx
// into stride phases (its pixels by residue), each a stride-1 pass over dy with the taps that
// reach it, all reading one window, their outputs interleaved into dx rows (rows_conv_entry.hpp:
// Phase). Measured selection decides against them where a channel-vectorised family wins.
// Declined: a stride beyond the dilated filter's extent (a 1 x 1 stride 2: rows and phases no tap
// reads); backward-data with more than 64 stride phases, or with a padding beyond the dilated
// filter's extent (dy rows no dx pixel reads).
// The bf16 variants (AVX512_BF16) read and write the caller's dense channels-first bf16 tensors
// with nothing staged; the fp32 ones (AVX-512, and AVX2 with tiles of half the accumulators)
// take anything on the staging's buffers.
#pragma once

#include "cpu/isa.hpp"  // KernelCopy
#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class RowsConvSolver final : public StagedSolver {
 public:
  // direction: forward or backward_data.
  RowsConvSolver(Direction direction, KernelCopy kernel) : direction_(direction), kernel_(kernel) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  Direction direction_;
  KernelCopy kernel_;
  bool bf16() const { return kernel_ == KernelCopy::bf16_avx512; }
};

}  // namespace convguard::cpu
