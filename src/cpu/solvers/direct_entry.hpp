// Entry points of cpu:direct's per-ISA loop files (see direct_kernels.hpp) and the blocking
// they share with direct.cpp's weight packing.
#pragma once

#include "core/geometry.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu::direct {

using detail::Geometry;

// Output-channel block x output-width block of the forward register tile.
struct Blocking {
  int kb, owb;
};
// static: each per-ISA file gets its own copy (no shared inline symbol across ISAs).
static inline Blocking forward_blocking(const Geometry& G) {
  return G.ow >= 24 ? Blocking{6, 32} : Blocking{12, 16};
}

// wpk: forward weights packed by direct.cpp as [g][k block][c][tap][kb] (unused otherwise).
void run_baseline(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk);
void run_avx2(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk);
void run_avx512(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk);

}  // namespace convguard::cpu::direct
