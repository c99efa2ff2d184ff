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
  std::string db;              // for -S auto; empty: the default database
  bool allow_tf32 = false;     // -S auto may choose TF32 variants for f32 problems
  std::string device = "cpu";  // cpu or cuda:N
  Device device_kind = Device::cpu;
};

// Turns parsed flags into problems. `command` is conv, convfp16 or convbfp16 (or empty when
// --problem / --suite supply the problems).
[[nodiscard]] Result<DriverOptions> driver_options(const Flags& f, const std::string& command);

}  // namespace convguard::cli
