// sgemm_bench N: the BLAS convguard loaded (and its core type), timed on an N^3 sgemm, best of
// 5. Compare libraries side by side:
//   build/release/bench/sgemm_bench 1024                    # OpenBLAS, SkylakeX core type set
//   OPENBLAS_CORETYPE= build/release/bench/sgemm_bench 1024 # OpenBLAS's own detection
//   CONVGUARD_BLAS=/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4
//   build/release/bench/sgemm_bench 1024
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cpu/blas.hpp"

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1024;
  if (n < 1) return 2;
  namespace blas = convguard::cpu::blas;
  if (!blas::available()) {
    std::printf("%s\n", blas::describe().c_str());
    return 1;
  }
  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 7) - 3;
    b[i] = static_cast<float>(i % 5) - 2;
  }
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    blas::sgemm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%s: n=%ld %.1f GFLOP/s\n", blas::describe().c_str(), n,
              2.0 * n * n * n / best / 1e9);
  return 0;
}
