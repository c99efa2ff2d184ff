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
// lanes: 8 for the AVX2 copy's vector tile (forward_tile_avx2: 12 accumulator vectors of 16
// registers, beside two of x and a broadcast); else (AVX-512, and the baseline copy, which keeps
// the AVX-512 shape) 16. Until session 19 the AVX2 copy ran the AVX-512 shapes too: 24
// accumulator vectors for 16 registers, spilled (GCC 12: of the FMA instructions in the compiled
// loops, 18 of 48 at 6 x 32 and 49 of 64 at 12 x 16, half of those 128-bit, read an accumulator
// from the stack; none at the AVX2 shapes: docs/perf/2026-11-30-session19/spills.txt).
// static: each per-ISA file gets its own copy (no shared inline symbol across ISAs).
static inline Blocking forward_blocking(const Geometry& G, int lanes) {
  if (lanes == 8) return G.ow >= 12 ? Blocking{6, 16} : Blocking{12, 8};
  return G.ow >= 24 ? Blocking{6, 32} : Blocking{12, 16};
}

// wpk: forward weights packed by direct.cpp as [g][k block][c][tap][kb] (unused otherwise), kb
// forward_blocking's for the copy the call runs (direct_lanes in direct.cpp).
void run_baseline(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk);
void run_avx2(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk);
void run_avx512(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk);

}  // namespace convguard::cpu::direct
