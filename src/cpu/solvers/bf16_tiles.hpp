// The register-tile sizes of cpu:bf16_direct's AVX-512 kernels, picked at run time: Tile<NI, NJ>
// for NI in 1-6 (pixels or dW columns) and NJ in 1-4 (16-channel blocks). Each kernel file
// defines its own Tile in an unnamed namespace, so every instantiation stays internal to it
// (no weak symbol: bf16_kernels.hpp says why that matters).
#pragma once

namespace convguard::cpu::bf16 {

template <template <int, int> class Tile, int NI>
constexpr auto pick_blocks(int nj) {
  return nj == 1   ? &Tile<NI, 1>::run
         : nj == 2 ? &Tile<NI, 2>::run
         : nj == 3 ? &Tile<NI, 3>::run
                   : &Tile<NI, 4>::run;
}

template <template <int, int> class Tile>
constexpr auto pick_tile(int ni, int nj) {
  switch (ni) {
    case 1:
      return pick_blocks<Tile, 1>(nj);
    case 2:
      return pick_blocks<Tile, 2>(nj);
    case 3:
      return pick_blocks<Tile, 3>(nj);
    case 4:
      return pick_blocks<Tile, 4>(nj);
    case 5:
      return pick_blocks<Tile, 5>(nj);
    default:
      return pick_blocks<Tile, 6>(nj);
  }
}

}  // namespace convguard::cpu::bf16
