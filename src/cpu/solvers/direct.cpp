#include "cpu/solvers/direct.hpp"

#include <fmt/format.h>

#include "cpu/isa.hpp"
#include "cpu/solvers/direct_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;
using direct::forward_blocking;
constexpr std::int64_t kMaxStrideW = 16;  // bounds the vector over-read (see kOverread)

// forward_blocking's lanes for the copy that runs at `isa` (the AVX2 copy's, else 16).
int direct_lanes(IsaLevel isa) {
  return isa == IsaLevel::avx2 ? 8 : 16;
}

std::int64_t packed_weight_floats(const Geometry& G, int kb) {
  return G.g * ((G.kg + kb - 1) / kb) * kb * G.cg * G.taps();
}

// Weights as [g][k block][c][tap][kb] so each tap's kb weights are one contiguous broadcast set.
void pack_forward_weights(const Geometry& G, int kb, const float* w, float* out) {
  const std::int64_t kblocks = (G.kg + kb - 1) / kb, taps = G.taps();
#pragma omp parallel for collapse(2)
  for (std::int64_t g = 0; g < G.g; ++g)
    for (std::int64_t b = 0; b < kblocks; ++b) {
      float* dst = out + (g * kblocks + b) * G.cg * taps * kb;
      for (std::int64_t c = 0; c < G.cg; ++c)
        for (std::int64_t t = 0; t < taps; ++t)
          for (int j = 0; j < kb; ++j) {
            const std::int64_t kl = b * kb + j;
            dst[(c * taps + t) * kb + j] =
                kl < G.kg ? w[((g * G.kg + kl) * G.cg + c) * taps + t] : 0.f;
          }
    }
}

}  // namespace

Status DirectSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.stride[2] > kMaxStrideW) {
    return not_applicable(fmt::format("width stride {} > {} (the vector tile reads past each row)",
                                      p.stride[2], kMaxStrideW));
  }
  return Status::ok();
}

StagingSpec DirectSolver::staging(const Problem& p) const {
  StagingSpec s;
  s.activations = Order::channels_first;
  s.filter = Order::channels_first;
  s.x_pad = forward_padding(p);
  s.x_overreads = true;
  return s;
}

void DirectSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  if (p.direction == Direction::forward) {
    const Geometry G = detail::geometry(p);
    layout.add(packed_weight_floats(G, forward_blocking(G, direct_lanes(isa_level())).kb));
  }
}

Status DirectSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                             const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  // The widest ISA this CPU runs (the loops are the same source compiled three times); read once,
  // so that the packing and the copy that runs agree.
  const IsaLevel isa = isa_level();
  float* wpk = nullptr;
  if (p.direction == Direction::forward) {
    wpk = layout.get(ws, first_scratch);
    pack_forward_weights(G, forward_blocking(G, direct_lanes(isa)).kb, t.w, wpk);
  }
  switch (isa) {
    case IsaLevel::avx512:
      direct::run_avx512(p.direction, G, t, wpk);
      break;
    case IsaLevel::avx2:
      direct::run_avx2(p.direction, G, t, wpk);
      break;
    case IsaLevel::baseline:
      direct::run_baseline(p.direction, G, t, wpk);
      break;
  }
  return Status::ok();
}

}  // namespace convguard::cpu
