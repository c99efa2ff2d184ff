// cpu:nchw_gemm's fp32 kernel for AVX2 (8-lane vectors); compiled with that ISA's flags.
#include "cpu/solvers/nchw_gemm_kernels.hpp"

namespace convguard::cpu::nchw_gemm {
void run_avx2(const Args& a) {
  run<F32<8>>(a);
}
}  // namespace convguard::cpu::nchw_gemm
