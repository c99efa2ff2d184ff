// Transposes of fp32 blocks for the staging's layout changes (NCHW <-> the channels-last buffers
// most CPU families compute on): 16 x 16 blocks in AVX-512 registers, where the CPU has it and
// CONVGUARD_CPU_ISA allows it. Element by element, the NCHW-to-NHWC staging of a 1x1 layer took
// 45% of cpu:implicit_gemm's time.
#pragma once

#include <cstdint>

namespace convguard::cpu {

// dst[j * dst_row + i] = src[i * src_row + j] for i < rows, j < cols.
void transpose_f32_avx512(const float* src, std::int64_t src_row, float* dst, std::int64_t dst_row,
                          std::int64_t rows, std::int64_t cols);
// Whether transpose_f32_avx512 may run here.
bool fast_transpose();

}  // namespace convguard::cpu
