#include "cpu/blas.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <cstdlib>
#include <mutex>

namespace convguard::cpu::blas {
namespace {

using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                         const float*, const int*, const float*, const int*, const float*, float*,
                         const int*);
using SetThreadsFn = void (*)(int);

struct Loaded {
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
  std::string description;
};

Loaded load() {
  Loaded l;
  if (!std::getenv("OPENBLAS_CORETYPE") && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  }
  // A library the user named is the only candidate: falling back to the system's BLAS when it
  // does not load would time and verify another library than the one asked for, silently.
  const char* override_path = std::getenv("CONVGUARD_BLAS");
  const bool overridden = override_path && *override_path;
  const char* candidates[] = {overridden ? override_path : "libopenblas.so.0",
                              overridden ? nullptr : "libopenblas.so",
                              overridden ? nullptr : "libblas.so.3"};
  std::string tried;
  for (const char* name : candidates) {
    if (!name) continue;
    void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    l.sgemm = h ? reinterpret_cast<SgemmFn>(dlsym(h, "sgemm_")) : nullptr;
    if (!l.sgemm) {
      const std::string why = h ? "no sgemm_ in it" : std::string("cannot load: ") + dlerror();
      if (overridden) {
        l.description = std::string("CONVGUARD_BLAS=") + name + ": " + why;
        return l;
      }
      tried += std::string(tried.empty() ? "" : ", ") + name + (h ? " (no sgemm_)" : "");
      continue;
    }
    l.set_threads = reinterpret_cast<SetThreadsFn>(dlsym(h, "openblas_set_num_threads"));
    const char* core = std::getenv("OPENBLAS_CORETYPE");
    l.description =
        std::string(name) + (core ? std::string(" (OPENBLAS_CORETYPE=") + core + ")" : "");
    return l;
  }
  l.description =
      "no BLAS found (tried " + tried + "); install libopenblas0-pthread or set CONVGUARD_BLAS";
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

bool available() {
  return loaded().sgemm != nullptr;
}
std::string describe() {
  return loaded().description;
}

Status check_blas_variable() {
  const char* path = std::getenv("CONVGUARD_BLAS");
  if (!path || !*path || available()) return Status::ok();
  return invalid_argument("environment variable " + describe());
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  const Loaded& l = loaded();
  if (l.set_threads) l.set_threads(omp_in_parallel() ? 1 : omp_get_max_threads());
  // Column-major BLAS on row-major data: C^T = op(B)^T * op(A)^T.
  const char ta = trans_b ? 'T' : 'N', tb = trans_a ? 'T' : 'N';
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const int LDA = static_cast<int>(ldb), LDB = static_cast<int>(lda), LDC = static_cast<int>(ldc);
  l.sgemm(&ta, &tb, &M, &N, &K, &alpha, b, &LDA, a, &LDB, &beta, c, &LDC);
}

}  // namespace convguard::cpu::blas
