// data/miopen/solvers.tsv: MIOpen's convolution solvers (name, family, the MIOPEN_DEBUG_* switch
// that disables each, directions, solution id) and its families' algorithm-level switches.
// Shared by the MIOpen plugin (which solvers exist, their ids), `convguard env` (which switch
// disables a solver) and the simulated MIOpen of the tests. Facts only; the file names its source.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"

namespace convguard::miopen_table {

// A MIOpen version (miopenGetVersion's major.minor; the table's comment maps them to ROCm).
struct Version {
  int major = 0, minor = 0;
  auto operator<=>(const Version&) const = default;
};
inline constexpr Version kNewest{1 << 30, 0};
// "2.20" or "2.20.0" (a third part is ignored; "3.00" is 3.0); nullopt when it is not one.
std::optional<Version> parse_version(const std::string& text);
// The MIOpen version a MIOpen device fingerprint names ("...|MIOpen 2.20.0 (...)|..."), if any.
std::optional<Version> version_in_fingerprint(const std::string& fingerprint);

struct Solver {
  std::string name, family;
  std::string switch_name;                     // empty: MIOpen has no per-solver switch
  bool directions[3] = {false, false, false};  // by convguard::Direction
  std::uint64_t id = 0;                        // MIOpen's solution id
  // false: MIOpen leaves the solver out unless its switch is set to 1 (a workaround in its
  // IsApplicable()), so setting the switch to 0 changes nothing. In a table for one version
  // (Table::for_version) this is that version's; in the whole table, the newest's.
  bool default_on = true;
  Version off_from = kNewest;        // default off from this version on
  Version since{}, until = kNewest;  // the versions the row holds for (inclusive)
  bool runs(Direction d) const { return directions[static_cast<int>(d)]; }
};

struct Table {
  std::vector<Solver> solvers;                            // in file order
  std::map<std::string, std::string> family_switch;       // family -> MIOPEN_DEBUG_CONV_*
  std::map<std::string, std::string> family_description;  // family -> what the switch covers
  const Solver* find(const std::string& name) const;
  const Solver* find(std::uint64_t id) const;
  // The rows that hold for MIOpen `v`, each with v's default; empty when none does.
  Table for_version(Version v) const;
};

// $CONVGUARD_DATA_DIR/miopen/solvers.tsv, else the source tree's data folder.
std::string default_path();
[[nodiscard]] Result<Table> load(const std::string& path = default_path());

}  // namespace convguard::miopen_table
