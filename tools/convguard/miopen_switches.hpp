// MIOpen's MIOPEN_DEBUG_* switches from data/miopen/solvers.tsv: for a solver recorded bad, the
// narrowest switch that disables it (its own, else its family's, with what else that disables).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "convguard/status.hpp"

namespace convguard::cli {

struct MiopenSwitches {
  struct Solver {
    std::string family, switch_name;  // switch_name empty: no per-solver switch
  };
  std::map<std::string, Solver> solvers;                  // by MIOpen solver name
  std::map<std::string, std::string> family_switch;       // family -> MIOPEN_DEBUG_CONV_*
  std::map<std::string, std::string> family_description;  // family -> what the switch covers
  // Solvers of a family, for "also disables ..." comments.
  std::vector<std::string> members(const std::string& family) const;
};

// Reads the table (path: $CONVGUARD_DATA_DIR or the build's data folder, miopen/solvers.tsv).
[[nodiscard]] Result<MiopenSwitches> load_miopen_switches();

}  // namespace convguard::cli
