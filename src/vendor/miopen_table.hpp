// data/miopen/solvers.tsv: MIOpen's convolution solvers (name, family, the MIOPEN_DEBUG_* switch
// that disables each, directions, solution id) and its families' algorithm-level switches.
// Shared by the MIOpen plugin (which solvers exist, their ids), `convguard env` (which switch
// disables a solver) and the simulated MIOpen of the tests. Facts only; the file names its source.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"

namespace convguard::miopen_table {

struct Solver {
  std::string name, family;
  std::string switch_name;                     // empty: MIOpen has no per-solver switch
  bool directions[3] = {false, false, false};  // by convguard::Direction
  std::uint64_t id = 0;                        // MIOpen's solution id
  // false: MIOpen leaves the solver out unless its switch is set to 1 (a workaround in its
  // IsApplicable()), so setting the switch to 0 changes nothing.
  bool default_on = true;
  bool runs(Direction d) const { return directions[static_cast<int>(d)]; }
};

struct Table {
  std::vector<Solver> solvers;                            // in file order
  std::map<std::string, std::string> family_switch;       // family -> MIOPEN_DEBUG_CONV_*
  std::map<std::string, std::string> family_description;  // family -> what the switch covers
  const Solver* find(const std::string& name) const;
  const Solver* find(std::uint64_t id) const;
};

// $CONVGUARD_DATA_DIR/miopen/solvers.tsv, else the source tree's data folder.
std::string default_path();
[[nodiscard]] Result<Table> load(const std::string& path = default_path());

}  // namespace convguard::miopen_table
