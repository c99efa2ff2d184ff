#include "vendor/miopen_table.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "vendor/data_path.hpp"

namespace convguard::miopen_table {

const Solver* Table::find(const std::string& name) const {
  for (const Solver& s : solvers) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const Solver* Table::find(std::uint64_t id) const {
  for (const Solver& s : solvers) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

std::string default_path() {
  return data_path("miopen/solvers.tsv");
}

Result<Table> load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status{StatusCode::io_error, path + ": cannot read the MIOpen solver table"};
  Table t;
  int line_no = 0;
  auto bad = [&](const std::string& why) {
    return Status{StatusCode::io_error, path + ":" + std::to_string(line_no) + ": " + why};
  };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '\t');) f.push_back(cell);
    if (f.size() == 4 && f[0] == "family") {
      t.family_switch[f[1]] = f[2];
      t.family_description[f[1]] = f[3];
      continue;
    }
    if ((f.size() != 6 && f.size() != 7) || f[0] != "solver") {
      return bad("not a family line (4 fields) or a solver line (6 or 7 fields)");
    }
    Solver s;
    s.name = f[1];
    s.family = f[2];
    s.switch_name = f[3] == "-" ? "" : f[3];
    std::stringstream dirs(f[4]);
    for (std::string d; std::getline(dirs, d, ',');) {
      if (d == "fwd") {
        s.directions[0] = true;
      } else if (d == "bwd_data") {
        s.directions[1] = true;
      } else if (d == "bwd_weights") {
        s.directions[2] = true;
      } else {
        return bad("direction '" + d + "' is not fwd, bwd_data or bwd_weights");
      }
    }
    try {
      s.id = std::stoull(f[5]);
    } catch (const std::exception&) {
      return bad("solution id '" + f[5] + "' is not a number");
    }
    if (f.size() == 7) {
      if (f[6] != "on" && f[6] != "off") return bad("default '" + f[6] + "' is not on or off");
      s.default_on = f[6] == "on";
    }
    if (t.find(s.name) || (s.id && t.find(s.id))) return bad("solver listed twice: " + s.name);
    t.solvers.push_back(std::move(s));
  }
  return t;
}

}  // namespace convguard::miopen_table
