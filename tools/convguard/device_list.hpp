// The probe's --device list: device names (cpu, cuda:N, a plugin's hip:N), `KIND:all` for every
// device of a kind present, and comma-separated lists of both; checked against what is present
// (a bad index, a name given twice, an unknown kind are refused, naming --device). Then grouped
// into sweeps: the CPU alone, and the devices of each GPU kind together, one worker per device
// in parallel over one trial list (probe/sweep.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "convguard/status.hpp"

namespace convguard::cli {

struct PresentDevices {
  std::string gpu_kind;  // this build's GPU backend ("cuda", "hip")
  int gpus = 0;
  std::vector<std::string> plugin_devices;                 // "hip:0", ...
  std::function<bool(const std::string&)> is_plugin_kind;  // a loaded plugin drives "KIND:N"
};

// The devices `text` names, in order, each once; empty text: every device present (cpu first).
[[nodiscard]] Result<std::vector<std::string>> expand_devices(const std::string& text,
                                                              const PresentDevices& present);

// One sweep per kind, in the order each kind first appears: {"cpu"}, {"cuda:0", "cuda:1"}, ...
std::vector<std::vector<std::string>> device_sweeps(const std::vector<std::string>& devices);

}  // namespace convguard::cli
