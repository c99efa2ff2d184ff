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

std::optional<Version> parse_version(const std::string& text) {
  Version v;
  char dot = 0;
  std::istringstream in(text);
  if (!(in >> v.major >> dot >> v.minor) || dot != '.' || v.major < 0 || v.minor < 0) {
    return std::nullopt;
  }
  return v;
}

std::optional<Version> version_in_fingerprint(const std::string& fingerprint) {
  const auto at = fingerprint.find("|MIOpen ");
  if (at == std::string::npos) return std::nullopt;
  return parse_version(fingerprint.substr(at + 8, fingerprint.find(' ', at + 8) - at - 8));
}

Table Table::for_version(Version v) const {
  Table t;
  t.family_switch = family_switch;
  t.family_description = family_description;
  for (const Solver& s : solvers) {
    if (v < s.since || s.until < v) continue;
    t.solvers.push_back(s);
    t.solvers.back().default_on = s.off_from == kNewest || v < s.off_from;
  }
  return t;
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
    if (f.size() < 6 || f.size() > 8 || f[0] != "solver") {
      return bad("not a family line (4 fields) or a solver line (6 to 8 fields)");
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
    if (f.size() >= 7) {
      // "on", "off", or "off@X.Y": on before MIOpen X.Y, off from it on.
      const std::string& d = f[6];
      if (d == "off") {
        s.off_from = Version{};
      } else if (d.rfind("off@", 0) == 0) {
        auto v = parse_version(d.substr(4));
        if (!v) return bad("default '" + d + "': not off@MAJOR.MINOR");
        s.off_from = *v;
      } else if (d != "on") {
        return bad("default '" + d + "' is not on, off or off@MAJOR.MINOR");
      }
      s.default_on = s.off_from == kNewest;
    }
    if (f.size() == 8 && f[7] != "-") {
      // "X.Y-" (from X.Y on) or "X.Y-Z.W" (both included).
      const auto dash = f[7].find('-');
      auto from = parse_version(f[7].substr(0, dash));
      const std::string to_text = dash == std::string::npos ? "?" : f[7].substr(dash + 1);
      auto to = to_text.empty() ? std::optional<Version>(kNewest) : parse_version(to_text);
      if (!from || !to || *to < *from) return bad("versions '" + f[7] + "': not X.Y- or X.Y-Z.W");
      s.since = *from;
      s.until = *to;
    }
    if (t.find(s.name) || (s.id && t.find(s.id))) return bad("solver listed twice: " + s.name);
    t.solvers.push_back(std::move(s));
  }
  return t;
}

}  // namespace convguard::miopen_table
