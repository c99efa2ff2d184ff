// convguard doctor: checks a system (live, or a saved snapshot) against the rules in
// data/doctor/rules.json and against the probe database's evidence; prints a table (check,
// PASS/WARN/FAIL, finding, fix) or JSON. Exit status: 0 all PASS, 1 worst WARN, 3 worst FAIL
// (2 is kept for bad input, as in every convguard command).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "commands.hpp"
#include "core/json_text.hpp"
#include "db/pg_store.hpp"
#include "db/store.hpp"
#include "doctor/rules.hpp"
#include "doctor/snapshot.hpp"
#include "flags.hpp"

namespace convguard::cli {
namespace {

using doctor::Finding;
using doctor::Severity;

// The probe database's evidence about the snapshot's GPUs: solvers recorded bad, and evidence
// recorded under another driver or library version (a fingerprint that no longer matches).
std::vector<Finding> evidence(const doctor::Snapshot& s, db::Store& store) {
  std::vector<Finding> out;
  std::map<std::string, std::map<std::string, std::set<std::string>>> bad;  // fp -> solver -> st
  std::set<std::string> fingerprints;
  for (const auto& t : store.all()) {
    fingerprints.insert(t.device);
    if (db::is_bad_status(t.status)) bad[t.device][t.solver].insert(t.status);
  }
  const std::string miopen = s.contains("versions") && s["versions"].contains("miopen")
                                 ? "MIOpen " + s["versions"]["miopen"].get<std::string>()
                                 : "";
  for (const auto& g : s.value("gpus", nlohmann::json::array())) {
    const std::string arch = g.value("arch", std::string());
    if (arch.empty()) continue;
    for (const auto& fp : fingerprints) {
      if (fp.find(arch) == std::string::npos) continue;
      const std::string device = fp.substr(0, 120);
      if (!miopen.empty() && fp.find("MIOpen ") != std::string::npos &&
          fp.find(miopen + " ") == std::string::npos) {
        out.push_back({"probe evidence is current", Severity::warn,
                       fmt::format("evidence for {} was recorded with another MIOpen or driver "
                                   "than this system's {}: {}",
                                   arch, miopen, device),
                       "rerun convguard probe: the old evidence is kept but no longer applies",
                       "convguard database"});
      }
      const auto it = bad.find(fp);
      if (it == bad.end()) continue;
      std::string list;
      int shown = 0;
      for (const auto& [solver, statuses] : it->second) {
        if (shown++ < 6)
          list +=
              fmt::format("{}{} ({})", list.empty() ? "" : ", ", solver, fmt::join(statuses, "/"));
      }
      if (shown > 6) list += fmt::format(" and {} more", shown - 6);
      out.push_back({"solvers recorded bad on this GPU", Severity::warn,
                     fmt::format("{} solver(s) recorded hang, crash or wrong on {}: {}",
                                 it->second.size(), arch, list),
                     fmt::format("convguard env --device '{}' prints the switches that avoid "
                                 "them",
                                 arch),
                     "convguard database"});
    }
  }
  if (out.empty())
    out.push_back({"solvers recorded bad on this GPU", Severity::pass,
                   "no solver is recorded hang, crash or wrong for these GPUs", "",
                   "convguard database"});
  return out;
}

}  // namespace

int doctor_main(int argc, char** argv) {
  Flags f({
      {0, "snapshot", "", "check this saved snapshot (JSON) instead of the live system"},
      {0, "save-snapshot", "", "write the live system's snapshot to this file"},
      {0, "db", "",
       "probe database whose evidence to check (default: $CONVGUARD_DB or ~/.cache/...)"},
      {0, "rules", "", "rules file (default: data/doctor/rules.json)"},
      {0, "json", "", "print the findings as JSON", true},
      {'h', "help", "", "print this help", true},
  });
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard doctor: %s\n", st.message().c_str());
    return 2;
  }
  if (f.on("help")) {
    std::printf(
        "usage: convguard doctor [--snapshot FILE] [--save-snapshot FILE] [--json]\n%s"
        "exit status: 0 all PASS, 1 worst WARN, 3 worst FAIL, 2 bad input\n",
        f.usage().c_str());
    return 0;
  }
  if (!f.positional().empty()) {
    std::fprintf(stderr, "convguard doctor: unexpected argument '%s'\n", f.positional()[0].c_str());
    return 2;
  }
  doctor::Snapshot snap;
  if (f.given("snapshot")) {
    auto s = doctor::read_snapshot(f.str("snapshot"));
    if (!s) {
      std::fprintf(stderr, "convguard doctor: --snapshot %s\n", s.status().message().c_str());
      return 2;
    }
    snap = std::move(*s);
  } else {
    snap = doctor::collect();
  }
  if (f.given("save-snapshot")) {
    if (auto st = doctor::write_snapshot(snap, f.str("save-snapshot")); !st) {
      std::fprintf(stderr, "convguard doctor: --save-snapshot %s\n", st.message().c_str());
      return 2;
    }
  }
  auto rules = doctor::load_rules(f.given("rules") ? f.str("rules") : doctor::default_rules_path());
  if (!rules) {
    std::fprintf(stderr, "convguard doctor: %s\n", rules.status().message().c_str());
    return 2;
  }
  auto findings = doctor::check_rules(*rules, snap);
  if (!findings) {
    std::fprintf(stderr, "convguard doctor: %s\n", findings.status().message().c_str());
    return 2;
  }
  const std::string db_path = f.given("db") ? f.str("db") : db::default_path();
  if (f.given("db") || db::is_postgres_url(db_path) || std::filesystem::exists(db_path)) {
    auto store = db::Store::open(db_path);
    if (!store) {
      std::fprintf(stderr, "convguard doctor: --db %s\n", store.status().message().c_str());
      return 2;
    }
    for (auto& x : evidence(snap, **store)) findings->push_back(std::move(x));
  }
  Severity worst = Severity::pass;
  for (const auto& x : *findings) worst = std::max(worst, x.status);
  if (f.on("json")) {
    nlohmann::json out = {{"worst", doctor::to_string(worst)},
                          {"findings", nlohmann::json::array()}};
    for (const auto& x : *findings)
      out["findings"].push_back({{"check", x.check},
                                 {"status", doctor::to_string(x.status)},
                                 {"finding", x.finding},
                                 {"fix", x.fix},
                                 {"source", x.source}});
    std::printf("%s\n", json_text(out, 2).c_str());
  } else {
    std::printf("%-48s %-6s %s\n", "check", "status", "finding / fix");
    for (const auto& x : *findings) {
      std::printf("%-48s %-6s %s\n", x.check.c_str(), doctor::to_string(x.status),
                  x.finding.c_str());
      if (x.status != Severity::pass && !x.fix.empty())
        std::printf("%-48s %-6s fix: %s\n", "", "", x.fix.c_str());
    }
    std::printf("worst: %s\n", doctor::to_string(worst));
  }
  return worst == Severity::fail ? 3 : worst == Severity::warn ? 1 : 0;
}

}  // namespace convguard::cli
