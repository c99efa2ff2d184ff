#include "probe/device.hpp"

#include <omp.h>

#include <fstream>
#include <functional>
#include <string>

#include "convguard/registry.hpp"
#include "cpu/blas.hpp"
#include "cpu/isa.hpp"
#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"

namespace convguard::probe {

DeviceInfo cpu_device() {
  std::string model = "unknown CPU";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  // The built-in solver set; plugin solvers carry their own ids, so which plugins one command
  // loaded must not change the device (evidence recorded with --plugin stays this device's).
  std::string ids;
  for (const Solver* s : cpu_solvers()) ids += std::string(s->id()) + ",";
  const std::size_t solver_hash = std::hash<std::string>{}(ids);
  DeviceInfo d;
  d.description = "cpu: " + model + ", " + std::to_string(omp_get_max_threads()) + " threads, " +
                  cpu::to_string(cpu::isa_level()) + ", BLAS " + cpu::blas::describe();
  d.fingerprint = "cpu|" + model + "|isa=" + cpu::to_string(cpu::isa_level()) +
                  "|threads=" + std::to_string(omp_get_max_threads()) +
                  "|blas=" + cpu::blas::describe() +
                  "|convguard=" CONVGUARD_VERSION "|solvers=" + std::to_string(solver_hash);
  return d;
}

TrialResult run_trial_on_device(const Solver& s, const Problem& p, TrialTensors& t,
                                const TrialOptions& o) {
  switch (s.device()) {
    case Device::gpu:
      return gpu::run_trial(s, p, t, o);
    case Device::plugin:
      return plugins::run_plugin_trial(s, p, t, o);
    case Device::cpu:
      break;
  }
  return run_trial(s, p, t, o);
}

}  // namespace convguard::probe
