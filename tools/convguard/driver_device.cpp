// The part of the driver's options that touches the process and the machine, apart from the flag
// parsing in driver_args.cpp so that the parsing can be fuzzed without devices or plugins.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "convguard/registry.hpp"
#include "driver_args.hpp"
#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"

namespace convguard::cli {

Status apply_driver_options(DriverOptions& o) {
  if (o.threads > 0) omp_set_num_threads(o.threads);
  if (o.memory_limit > 0)
    ::setenv("CONVGUARD_MEMORY_LIMIT", std::to_string(o.memory_limit).c_str(), 1);
  (void)all_solvers();  // loads CONVGUARD_PLUGINS, whose devices --device may name
  if (o.device != "cpu" && plugins::is_plugin_device(o.device)) {
    const auto present = plugins::plugin_device_names();
    if (std::find(present.begin(), present.end(), o.device) == present.end())
      return invalid_argument(fmt::format("flag --device: '{}' is not present ({} here)", o.device,
                                          present.empty() ? "none" : present[0] + ", ..."));
    o.device_kind = Device::plugin;
  } else if (o.device != "cpu") {
    const std::string prefix = std::string(gpu::backend()) + ":";
    int index = -1;
    if (o.device.rfind(prefix, 0) == 0) {
      try {
        index = std::stoi(o.device.substr(prefix.size()));
      } catch (const std::exception&) {
      }
    }
    const int gpus = gpu::device_count();
    if (index < 0 || index >= gpus) {
      return invalid_argument(
          fmt::format("flag --device: '{}' is not available here (cpu{})", o.device,
                      gpus ? fmt::format(", {}0..{}", prefix, gpus - 1) : std::string(", no GPU")));
    }
    o.device_kind = Device::gpu;
  }
  return Status::ok();
}

}  // namespace convguard::cli
