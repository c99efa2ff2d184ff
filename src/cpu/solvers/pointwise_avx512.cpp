// cpu:pointwise's fp32 kernel for AVX512 (16-lane vectors); compiled with that ISA's flags.
#include "cpu/solvers/pointwise_kernels.hpp"

namespace convguard::cpu::pointwise {
void run_avx512(const Args& a) {
  run<F32<16>>(a);
}
}  // namespace convguard::cpu::pointwise
