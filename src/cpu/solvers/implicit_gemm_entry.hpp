// Entry points of cpu:implicit_gemm's per-ISA kernel files (see implicit_gemm_kernels.hpp).
#pragma once

#include "core/geometry.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu::igemm {

using detail::Geometry;
// w: filters [K][C/G][taps] fp32; panels: scratch for the packed weights; zero: a zeroed row.
void run_avx512(Direction d, const Geometry& G, const StagedTensors& t, const float* w,
                float* panels, const float* zero);
void run_avx2(Direction d, const Geometry& G, const StagedTensors& t, const float* w, float* panels,
              const float* zero);

}  // namespace convguard::cpu::igemm
