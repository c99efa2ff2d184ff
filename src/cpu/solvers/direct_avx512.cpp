// cpu:direct loops for AVX512; compiled with -mavx512f -mfma.
#include "cpu/solvers/direct_kernels.hpp"

namespace convguard::cpu::direct {
void run_avx512(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk) {
  run_direction<16>(d, G, t, wpk);
}
}  // namespace convguard::cpu::direct
