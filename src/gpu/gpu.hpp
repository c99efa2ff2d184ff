// The GPU backend as the rest of convguard sees it: plain C++, no CUDA or HIP headers, so the
// CPU-only build compiles the same callers against gpu/none.cpp.
//
// GPU solvers take device pointers in ConvTensors (Solver::device() == Device::gpu). The probe
// worker for a GPU creates the context once, generates the test data on the host from the seed,
// copies it over, runs and times the solver with device events, copies the result back and
// verifies it on the host (docs/verification.md), fp64 reference or sampled points, plus, above the
// full-reference limit, a full comparison with gpu:naive (the device reference).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::detail {
class DeviceMemory;
}

namespace convguard::gpu {

// Whether this build has a GPU backend ("cuda", "hip") or not ("none").
const char* backend();

struct DeviceInfo {
  int index = 0;
  std::string name, arch;  // "NVIDIA H100 80GB HBM3", "sm_90"
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;
};

// GPUs this process can use (0 without a GPU, a driver or a GPU build; never aborts).
int device_count();
// Makes `index` current and describes it.
[[nodiscard]] Result<DeviceInfo> open_device(int index);

// This build's own GPU solvers, in list order.
const std::vector<const Solver*>& gpu_solvers();

// gpu:naive, the device reference: trials above the full-reference limit compare every output
// element with it (gpu/solvers/naive.hpp).
const Solver& reference_solver();

// Occupies the GPU for about `microseconds` (one thread spinning on the device clock). Timing
// events recorded behind it measure the GPU's time alone: the host enqueues the timed work while
// the GPU is still busy, so launch overhead (a few microseconds per call, ~30 for cuDNN's legacy
// API before its descriptors were cached) is not counted, as with CUDA-graph replay.
[[nodiscard]] Status launch_delay(double microseconds);
inline constexpr double kTimingDelayUs = 100;

// The current GPU's memory calls (nullptr in a build without a GPU backend): transforms around a
// GPU solver copy their inner problems' tensors with them.
std::unique_ptr<detail::DeviceMemory> device_memory();

// One trial on the current GPU (see the header comment). Device errors that leave the context
// unusable (illegal address, launch failure) come back as StatusCode::device_error.
TrialResult run_trial(const Solver& s, const Problem& p, TrialTensors& host, const TrialOptions& o);

// Which loader gpu:wgmma_bwd_weights' plan of `p` takes: "bulk copies" (the warp-specialised TMA
// kernel) or "cp.async"; empty where it declines `p` or the backend has no such solver (HIP, no
// GPU toolkit). For the tests, which must know that their shapes reached each kernel.
std::string_view wgmma_bwd_weights_loader(const Problem& p);
// Which kernel gpu:wgmma_implicit_gemm's (or, for f32, gpu:wgmma_implicit_gemm:tf32's) plan of `p`
// takes (WgmmaImplicitGemmSolver::kernel: "phased walk", "phased grid", ...); empty where it
// declines `p` or the backend has no such solver. For the tests, as above.
std::string_view wgmma_implicit_gemm_kernel(const Problem& p);
// Its plan's tiles (WgmmaImplicitGemmSolver::tiles: "128 x 256 tiles, split 5", "pixel-wide, 256
// pixels"); empty as above. For the tests, as above.
std::string wgmma_implicit_gemm_tiles(const Problem& p);

}  // namespace convguard::gpu
