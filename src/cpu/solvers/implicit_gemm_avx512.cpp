// cpu:implicit_gemm kernels for AVX-512 (16-lane vectors); compiled with -mavx512f -mfma.
#include "cpu/solvers/implicit_gemm_kernels.hpp"

namespace convguard::cpu::igemm {
void run_avx512(Direction d, const Geometry& G, const StagedTensors& t, const float* w,
                float* panels, const float* zero) {
  run<16>(d, G, t, w, panels, zero);
}
}  // namespace convguard::cpu::igemm
