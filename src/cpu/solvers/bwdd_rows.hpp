// cpu:bwdd_rows:{avx512,avx512_bf16} — stride-1 backward-data as dot products along dx's rows, on
// channels-first tensors: dx = a forward pass over dy zero-padded by (filter extent - 1 - padding),
// with the filter flipped and its channel roles swapped. The vectors run along the dx row, so a
// first layer's 3 input channels fill every lane: a register tile is 3 channels x 8 vectors of
// pixels there (6 x 4 from 6 channels up) and each dy load serves every channel of the tile
// (bwdd_rows_avx512.cpp). It is for what the channel-vectorised families do badly (dx with few
// channels per group); measured selection decides elsewhere. Declined: stride > 1, and a
// padding beyond the dilated filter's extent (dy rows no dx pixel reads).
#pragma once

#include "cpu/staged_solver.hpp"

namespace convguard::cpu {

class BwdDataRowsSolver final : public StagedSolver {
 public:
  // bf16: the vdpbf16ps variant (AVX512_BF16), reading and writing the caller's dense
  // channels-first bf16 tensors with nothing staged (window words are pairs of dy channels);
  // else fp32 on the staging's buffers.
  explicit BwdDataRowsSolver(bool bf16) : bf16_(bf16) {}
  std::string_view id() const override;
  [[nodiscard]] Status check(const Problem& p) const override;

 protected:
  StagingSpec staging(const Problem& p) const override;
  void scratch(const Problem& p, WorkspaceLayout& layout) const override;
  [[nodiscard]] Status compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const override;

 private:
  bool bf16_;
};

}  // namespace convguard::cpu
