// cpu:direct loops for AVX2; compiled with -mavx2 -mfma.
#include "cpu/solvers/direct_kernels.hpp"

namespace convguard::cpu::direct {
void run_avx2(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk) {
  run_direction<8>(d, G, t, wpk);
}
}  // namespace convguard::cpu::direct
