// cpu:bwdw kernels for AVX512 (16-lane vectors); compiled with -mavx512f -mfma.
#include "cpu/solvers/bwdw_kernels.hpp"

namespace convguard::cpu::bwdw {
void run_avx512(const Geometry& G, const StagedTensors& t, float* partials, CallerLayout caller) {
  run<16>(G, t, partials, caller);
}
}  // namespace convguard::cpu::bwdw
