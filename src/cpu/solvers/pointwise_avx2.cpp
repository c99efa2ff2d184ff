// cpu:pointwise's fp32 kernel for AVX2 (8-lane vectors); compiled with that ISA's flags.
#include "cpu/solvers/pointwise_kernels.hpp"

namespace convguard::cpu::pointwise {
void run_avx2(const Args& a) {
  run<F32<8>>(a);
}
}  // namespace convguard::cpu::pointwise
