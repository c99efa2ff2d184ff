// `convguard driver` arguments: MIOpenDriver's conv flags verbatim (same letters, long names
// and defaults) plus convguard's extensions, turned into the list of problems to run.
#pragma once

#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "convguard/solver.hpp"
#include "convguard/trial.hpp"
#include "flags.hpp"

namespace convguard::cli {

std::vector<FlagSpec> driver_flag_specs();

struct DriverOptions {
  std::vector<Problem> problems;      // one per (problem, direction)
  std::vector<std::string> commands;  // the reproducing command of each problem
  std::string solver;                 // "" = first applicable, "all", or an id
  TrialOptions trial;
  bool print_problem = true;
  bool json = false;
  std::string save_dir, load_dir;
  std::string db;                    // for -S auto; empty: the default database
  bool allow_tf32 = false;           // -S auto may choose TF32 variants for f32 problems
  std::string device = "cpu";        // cpu, cuda:N or a plugin's device
  Device device_kind = Device::cpu;  // set by apply_driver_options
  int threads = 0;                   // 0: OMP_NUM_THREADS or all cores
  std::int64_t memory_limit = 0;     // bytes; 0: --memory-limit not given
};

// Turns parsed flags into problems and options. `command` is conv, convfp16 or convbfp16 (or
// empty when --problem / --suite supply the problems). It reads the suite files it is given and
// nothing else: no device, no plugin, no change to the process (fuzz/driver_flags.cpp runs it).
[[nodiscard]] Result<DriverOptions> driver_options(const Flags& f, const std::string& command);
// What the options ask of this process and machine (driver_device.cpp): the thread count, the
// memory limit (in the environment, which workers inherit) and the device, which must be here
// (loads CONVGUARD_PLUGINS, whose devices --device may name). Sets o.device_kind.
[[nodiscard]] Status apply_driver_options(DriverOptions& o);

}  // namespace convguard::cli
