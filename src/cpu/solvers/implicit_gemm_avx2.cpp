// cpu:implicit_gemm kernels for AVX2 (8-lane vectors); compiled with -mavx2 -mfma.
#include "cpu/solvers/implicit_gemm_kernels.hpp"

namespace convguard::cpu::igemm {
void run_avx2(Direction d, const Geometry& G, const StagedTensors& t, const float* w, float* panels,
              const float* zero) {
  run<8>(d, G, t, w, panels, zero);
}
}  // namespace convguard::cpu::igemm
