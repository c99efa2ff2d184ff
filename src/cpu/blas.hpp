// BLAS, loaded at run time. OpenBLAS 0.3.21 (Debian 12) does not recognise recent AVX-512 CPUs
// and silently falls back to ~65 GFLOP/s SSE kernels unless OPENBLAS_CORETYPE is set before
// the library initialises; loading it ourselves lets us set that first (to SkylakeX when the
// CPU has AVX-512), whatever program convguard is linked into. It also keeps BLAS optional:
// without it the BLAS solvers say so in check() and the rest of convguard works.
// CONVGUARD_BLAS=/path/to/libblas.so overrides the library (any BLAS exporting sgemm_); when it
// does not load, no other BLAS is used in its place (check_blas_variable() says why).
#pragma once

#include <cstdint>
#include <string>

#include "convguard/status.hpp"

namespace convguard::cpu::blas {

bool available();
// Which library was loaded (and the core type used), or why none could be.
std::string describe();
// ok when $CONVGUARD_BLAS is unset, empty or loads with sgemm_; else an error naming the variable.
[[nodiscard]] Status check_blas_variable();

// Row-major C[m x n] = alpha * op(A) * op(B) + beta * C.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

}  // namespace convguard::cpu::blas
