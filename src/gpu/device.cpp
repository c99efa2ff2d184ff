#include "gpu/check.hpp"
#include "gpu/gpu.hpp"
#include "gpu/solvers/direct.hpp"
#include "gpu/solvers/implicit_gemm.hpp"
#include "gpu/solvers/naive.hpp"
#include "gpu/solvers/simt_gemm.hpp"
#include "gpu/solvers/winograd.hpp"
#if !defined(CONVGUARD_HIP) && !defined(__HIPCC__)
#include "gpu/solvers/tc_bwd_weights.hpp"       // PTX (mma.sync, cp.async): CUDA only
#include "gpu/solvers/tc_implicit_gemm.hpp"     // PTX (mma.sync, cp.async): CUDA only
#include "gpu/solvers/wgmma_bwd_weights.hpp"    // PTX (wgmma, sm_90a): CUDA only
#include "gpu/solvers/wgmma_implicit_gemm.hpp"  // PTX (wgmma, sm_90a): CUDA only
#endif

namespace convguard::gpu {

const char* backend() {
  return CG_GPU_BACKEND;
}

std::string_view wgmma_bwd_weights_loader(const Problem& p) {
#if !defined(CONVGUARD_HIP) && !defined(__HIPCC__)
  return WgmmaBwdWeightsSolver::loader(p);
#else
  (void)p;
  return {};
#endif
}

std::string_view wgmma_implicit_gemm_kernel(const Problem& p) {
#if !defined(CONVGUARD_HIP) && !defined(__HIPCC__)
  return WgmmaImplicitGemmSolver::kernel(p);
#else
  (void)p;
  return {};
#endif
}

std::string wgmma_implicit_gemm_tiles(const Problem& p) {
#if !defined(CONVGUARD_HIP) && !defined(__HIPCC__)
  return WgmmaImplicitGemmSolver::tiles(p);
#else
  (void)p;
  return {};
#endif
}

int device_count() {
  int n = 0;
  // No driver or no device is an answer (0), not an error.
  if (CG_GPU(GetDeviceCount)(&n) != kSuccess) {
    (void)last_error();
    return 0;
  }
  return n;
}

Result<DeviceInfo> open_device(int index) {
  const int n = device_count();
  if (index < 0 || index >= n) {
    return invalid_argument("device: GPU " + std::to_string(index) + " does not exist (" +
                            std::to_string(n) + " visible)");
  }
  if (auto st = check(CG_GPU(SetDevice)(index), "set device"); !st) return st;
  cg_device_prop prop{};
  if (auto st = check(CG_GPU(GetDeviceProperties)(&prop, index), "device properties"); !st)
    return st;
  DeviceInfo d;
  d.index = index;
  d.name = prop.name;
#if defined(__HIPCC__) || defined(CONVGUARD_HIP)
  d.arch = prop.gcnArchName;
#else
  d.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
#endif
  d.multiprocessors = prop.multiProcessorCount;
  d.memory_bytes = prop.totalGlobalMem;
  (void)CG_GPU(DriverGetVersion)(&d.driver_version);
  (void)CG_GPU(RuntimeGetVersion)(&d.runtime_version);
  // Create the context now, so the first trial does not pay for it.
  if (auto st = check(CG_GPU(Free)(nullptr), "context"); !st) return st;
  return d;
}

const Solver& reference_solver() {
  static const NaiveSolver naive;
  return naive;
}

const std::vector<const Solver*>& gpu_solvers() {
  static const SimtGemmSolver simt_gemm;
  static const ImplicitGemmSolver implicit_gemm;
  static const WinogradSolver winograd;
  static const DirectSolver direct;
#if !defined(CONVGUARD_HIP) && !defined(__HIPCC__)
  static const TcImplicitGemmSolver tc_implicit_gemm, tc_tf32(true);
  static const TcBwdWeightsSolver tc_bwd_weights, tc_bwd_weights_tf32(true);
  static const WgmmaImplicitGemmSolver wgmma_implicit_gemm, wgmma_tf32(true);  // off sm_90: no
  static const WgmmaBwdWeightsSolver wgmma_bwd_weights;                        // declines off sm_90
  static const std::vector<const Solver*> list = {&wgmma_implicit_gemm,
                                                  &wgmma_tf32,
                                                  &wgmma_bwd_weights,
                                                  &tc_implicit_gemm,
                                                  &tc_tf32,
                                                  &tc_bwd_weights,
                                                  &tc_bwd_weights_tf32,
                                                  &simt_gemm,
                                                  &implicit_gemm,
                                                  &winograd,
                                                  &direct,
                                                  &reference_solver()};
#else
  static const std::vector<const Solver*> list = {&simt_gemm, &implicit_gemm, &winograd, &direct,
                                                  &reference_solver()};
#endif
  return list;
}

}  // namespace convguard::gpu
