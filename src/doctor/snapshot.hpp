// `convguard doctor`'s view of a system: GPUs, driver/runtime/library versions, the environment
// variables that change what GPU libraries do, and the Python stack. Plain JSON, so a snapshot
// can be saved on one machine (--save-snapshot) and checked anywhere (--snapshot), and the tests
// can check the seeds' machines without having them.
//
// Layout (every field optional; versions are strings):
//   {"snapshot_version": 1, "taken_at": "...", "os": "...",
//    "gpus": [{"vendor": "AMD", "name": "...", "arch": "gfx1010", "compute_units": 36,
//              "source": "kfd topology"}],
//    "versions": {"rocm": "5.7.1", "miopen": "2.20.0", "amdgpu_driver": "...",
//                 "cuda_driver": "...", "cuda_runtime": "...", "cudnn": "9.14.0"},
//    "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "MIOPEN_DEBUG_CONV_GEMM": "0", ...},
//    "python": {"version": "3.10.12", "torch": "2.2.2+rocm5.7", "torch_hip": "5.7.31921",
//               "torch_cuda": null, "numpy": "1.26.4"}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "convguard/status.hpp"

namespace convguard::doctor {

using Snapshot = nlohmann::json;

// The live system. Never fails: what cannot be found is left out (and the rules say so).
Snapshot collect();

[[nodiscard]] Result<Snapshot> read_snapshot(const std::string& path);
[[nodiscard]] Status write_snapshot(const Snapshot& s, const std::string& path);

// Environment variables a snapshot records: exact names and prefixes ("MIOPEN_").
bool recorded_env(const std::string& name);

}  // namespace convguard::doctor
