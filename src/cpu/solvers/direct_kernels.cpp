// cpu:direct loops for baseline x86-64 (no ISA flags).
#include "cpu/solvers/direct_kernels.hpp"

namespace convguard::cpu::direct {
void run_baseline(Direction d, const Geometry& G, const StagedTensors& t, const float* wpk) {
  run_direction<16>(d, G, t, wpk);
}
}  // namespace convguard::cpu::direct
