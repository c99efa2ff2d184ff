// The GPU backend of a build without a GPU toolkit: no devices, no solvers, every entry point
// answers so (convguard builds and runs everywhere; `convguard probe --device cuda:0` says why
// not).
#include "core/staged_trial.hpp"
#include "gpu/gpu.hpp"

namespace convguard::gpu {

const char* backend() {
  return "none";
}
int device_count() {
  return 0;
}
Result<DeviceInfo> open_device(int) {
  return invalid_argument("device: this build has no GPU backend (built without the CUDA toolkit)");
}
const std::vector<const Solver*>& gpu_solvers() {
  static const std::vector<const Solver*> none;
  return none;
}
std::unique_ptr<detail::DeviceMemory> device_memory() {
  return nullptr;
}
std::string_view wgmma_bwd_weights_loader(const Problem&) {
  return {};
}
std::string_view wgmma_implicit_gemm_kernel(const Problem&) {
  return {};
}
std::string wgmma_implicit_gemm_tiles(const Problem&) {
  return {};
}
TrialResult run_trial(const Solver&, const Problem&, TrialTensors&, const TrialOptions&) {
  TrialResult r;
  r.status = invalid_argument("this build has no GPU backend");
  return r;
}

}  // namespace convguard::gpu
