// cpu:bwdw kernels for AVX2 (8-lane vectors); compiled with -mavx2 -mfma.
#include "cpu/solvers/bwdw_kernels.hpp"

namespace convguard::cpu::bwdw {
void run_avx2(const Geometry& G, const StagedTensors& t, float* partials, CallerLayout caller) {
  run<8>(G, t, partials, caller);
}
}  // namespace convguard::cpu::bwdw
