#include "miopen_switches.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace convguard::cli {

std::vector<std::string> MiopenSwitches::members(const std::string& family) const {
  std::vector<std::string> v;
  for (const auto& [name, s] : solvers) {
    if (s.family == family) v.push_back(name);
  }
  return v;
}

Result<MiopenSwitches> load_miopen_switches() {
  const char* dir = std::getenv("CONVGUARD_DATA_DIR");
  const std::string path = std::string(dir ? dir : CONVGUARD_DATA_DIR) + "/miopen/solvers.tsv";
  std::ifstream in(path);
  if (!in) return Status{StatusCode::io_error, path + ": cannot read the MIOpen switch table"};
  MiopenSwitches t;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '\t');) f.push_back(cell);
    if (f.size() >= 4 && f[0] == "family") {
      t.family_switch[f[1]] = f[2];
      t.family_description[f[1]] = f[3];
    } else if (f.size() >= 4 && f[0] == "solver") {
      t.solvers[f[1]] = {f[2], f[3] == "-" ? "" : f[3]};
    } else {
      return Status{StatusCode::io_error,
                    path + ":" + std::to_string(line_no) + ": not a family or solver line"};
    }
  }
  return t;
}

}  // namespace convguard::cli
