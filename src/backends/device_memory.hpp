// The memory calls of a device kind: none for the CPU (host memory), the GPU backend's, or those of
// the loaded plugin that drives `plugin_kind` ("hip"). Transforms copy their inner problems'
// tensors with them; a Context's plan allocates its workspace with them.
#pragma once

#include <memory>
#include <string_view>

#include "convguard/solver.hpp"
#include "core/staged_trial.hpp"

namespace convguard {

std::unique_ptr<detail::DeviceMemory> device_memory_for(Device d, std::string_view plugin_kind);

}  // namespace convguard
