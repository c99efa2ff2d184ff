// convguard env: the shell profile the evidence supports. For convguard's own library,
// CONVGUARD_SKIP_SOLVERS lists every solver recorded hang, crash or wrong on this device (selection
// never picks them anyway; the variable also keeps them out of -1 / first-applicable choices and
// out of programs that have no database). Each entry carries a comment naming the trials that
// justify it. For MIOpen solvers (`miopen:<SolverName>`, the MIOpen plugin's ids) it prints the
// narrowest MIOPEN_DEBUG_* switch that disables each (data/miopen/solvers.tsv): the solver's own,
// else its family's with a comment naming what else that disables, plus the
// MIOPEN_DEBUG_FIND_ONLY_SOLVER alternative when a MIOpen solver verified on the same problem.
// With no bad evidence it says so and disables nothing.
//
// The output is sourced by a shell, and every row may have come from `db import`: values are
// quoted by the target shell's rules (shell_quoted), comment text is reduced to printable ASCII
// (comment_text), variable names must be [A-Z_][A-Z0-9_]*, and rows whose solver id or problem
// fails the database's grammar (db/fields.hpp) are named in a comment and otherwise ignored.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "commands.hpp"
#include "core/safe_text.hpp"
#include "db/fields.hpp"
#include "db/store.hpp"
#include "flags.hpp"
#include "probe/device.hpp"
#include "vendor/miopen_table.hpp"

namespace convguard::cli {

namespace {

// One environment assignment in the chosen shell's syntax, or why there is none (a name that is
// not [A-Z_][A-Z0-9_]* would be code in every shell).
Result<std::string> assign(Shell shell, const std::string& name, const std::string& value) {
  if (!is_env_name(name))
    return invalid_argument(
        fmt::format("'{}' is not a variable name ([A-Z_][A-Z0-9_]*)", comment_text(name)));
  const std::string v = shell_quoted(value, shell);
  if (shell == Shell::fish) return fmt::format("set -gx {} {}", name, v);
  if (shell == Shell::powershell) return fmt::format("$env:{} = {}", name, v);
  return fmt::format("export {}={}", name, v);
}

// A '#' line of text from the database (or the command line): never more than one line.
void comment(const std::string& text) {
  std::printf("# %s\n", comment_text(text).c_str());
}

void print_trials(const std::vector<std::string>& trials) {
  for (std::size_t i = 0; i < trials.size() && i < 5; ++i) comment("  " + trials[i]);
  if (trials.size() > 5)
    std::printf("#   ... and %zu more (convguard db show)\n", trials.size() - 5);
}

}  // namespace

int env_main(int argc, char** argv) {
  Flags f({{0, "db", "",
            "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
           {0, "shell", "bash", "bash, fish or powershell"},
           {0, "device", "cpu",
            "whose evidence: cpu (this CPU), all, or text found in a device's fingerprint "
            "(e.g. gfx1010, H100)"},
           {0, "all-devices", "", "the same as --device all", true},
           {'h', "help", "", "print this help", true}});
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard env: %s\n", st.message().c_str());
    return 2;
  }
  if (f.on("help")) {
    std::printf(
        "usage: convguard env [--shell bash|fish|powershell] [--device cpu|all|TEXT] [--db "
        "PATH]\n%s",
        f.usage().c_str());
    return 0;
  }
  const std::string shell_name = f.str("shell");
  if (shell_name != "bash" && shell_name != "fish" && shell_name != "powershell") {
    std::fprintf(stderr, "convguard env: --shell: '%s' is not bash, fish or powershell\n",
                 comment_text(shell_name).c_str());
    return 2;
  }
  const Shell shell = shell_name == "fish"         ? Shell::fish
                      : shell_name == "powershell" ? Shell::powershell
                                                   : Shell::bash;
  if (!f.positional().empty()) {
    std::fprintf(stderr, "convguard env: unexpected argument '%s'\n", f.positional()[0].c_str());
    return 2;
  }
  auto store = db::Store::open(f.given("db") ? f.str("db") : db::default_path());
  if (!store) {
    std::fprintf(stderr, "convguard env: %s\n", store.status().message().c_str());
    return 2;
  }
  const std::string which = f.on("all-devices") ? "all" : f.str("device");
  const std::string cpu = probe::cpu_device().fingerprint;
  auto selected = [&](const std::string& fingerprint) {
    if (which == "all") return true;
    if (which == "cpu") return fingerprint == cpu;
    return fingerprint.find(which) != std::string::npos;
  };
  std::map<std::string, std::vector<std::string>> bad;  // solver -> "status: problem"
  std::map<std::string, std::string> verified_miopen;   // problem -> a MIOpen solver ok on it
  std::vector<std::string> ignored;
  // The MIOpen versions the evidence was taken with: a switch is written only where it acts in
  // each of them (data/miopen/solvers.tsv, VERSIONS and DEFAULT).
  std::set<miopen_table::Version> miopen_versions;
  const auto rows = (*store)->all();
  if (auto st = (*store)->read_failure(); !st) {
    std::fprintf(stderr, "convguard env: %s\n", st.message().c_str());
    return 1;
  }
  for (const auto& t : rows) {
    if (!selected(t.device)) continue;
    // Rows written before the grammar existed, or by hand: evidence only if they parse.
    if (auto st = check_solver_id(t.solver); !st) {
      ignored.push_back("ignored a row whose solver id is not valid: " + st.message());
      continue;
    }
    if (auto key = db::canonical_problem_key(t.problem); !key || *key != t.problem) {
      ignored.push_back("ignored a row of " + t.solver +
                        " whose problem is not a canonical problem string");
      continue;
    }
    if (t.solver.rfind("miopen:", 0) == 0) {
      miopen_versions.insert(
          miopen_table::version_in_fingerprint(t.device).value_or(miopen_table::kNewest));
    }
    if (db::is_bad_status(t.status)) {
      bad[t.solver].push_back(t.status + ": " + t.problem);
    } else if (t.status == "ok" && t.solver.rfind("miopen:", 0) == 0) {
      verified_miopen.emplace(t.problem, t.solver.substr(7));
    }
  }
  comment(fmt::format("convguard env: generated from {} (device: {})", (*store)->path(), which));
  for (const auto& line : ignored) comment(line);
  if (bad.empty()) {
    std::printf("# no solver is recorded hang, crash or wrong here: nothing to disable\n");
    return 0;
  }
  // MIOpen's solvers: switches. Everything else: CONVGUARD_SKIP_SOLVERS.
  std::map<std::string, std::vector<std::string>> switch_reasons;  // switch -> comment lines
  std::map<std::string, std::vector<std::string>> switch_trials;
  std::string list;
  std::optional<miopen_table::Table> table;
  for (const auto& [solver, trials] : bad) {
    if (solver.rfind("miopen:", 0) != 0) {
      comment(fmt::format("{}: {} bad trial(s):", solver, trials.size()));
      print_trials(trials);
      list += (list.empty() ? "" : ",") + solver;
      continue;
    }
    if (!table) {
      auto t = miopen_table::load();
      if (!t) {
        std::fprintf(stderr, "convguard env: %s\n", t.status().message().c_str());
        return 2;
      }
      table = std::move(*t);
    }
    const std::string name = solver.substr(7);
    const miopen_table::Solver* found = table->find(name);
    if (!found) {
      comment(
          fmt::format("{}: {} bad trial(s), but no MIOPEN_DEBUG_* switch is known for it "
                      "(not in data/miopen/solvers.tsv)",
                      name, trials.size()));
      print_trials(trials);
      continue;
    }
    const auto& s = *found;
    std::string off_in, absent_in;
    for (const auto& v : miopen_versions) {
      const auto rows = table->for_version(v);
      const miopen_table::Solver* r = rows.find(name);
      const std::string text =
          v == miopen_table::kNewest ? "the newest" : fmt::format("{}.{}", v.major, v.minor);
      if (!r) absent_in += (absent_in.empty() ? "" : ", ") + text;
      if (r && !r->default_on) off_in += (off_in.empty() ? "" : ", ") + text;
    }
    if (!off_in.empty()) {
      // Off unless its switch is 1: "=0" would change nothing; the fix is not to enable it.
      comment(
          fmt::format("{}: {} bad trial(s); MIOpen {} runs it only when {}=1 is set: unset that "
                      "(no switch to add)",
                      name, trials.size(), off_in, s.switch_name));
      print_trials(trials);
      continue;
    }
    if (!absent_in.empty()) {
      comment(
          fmt::format("{}: {} bad trial(s), but MIOpen {} has no such solver: its switch "
                      "would do nothing there (no switch to add)",
                      name, trials.size(), absent_in));
      print_trials(trials);
      continue;
    }
    std::string sw = s.switch_name, why;
    if (sw.empty()) {
      sw = table->family_switch[s.family];
      std::set<std::string> members;  // sorted: the comment reads the same on every machine
      for (const auto& m : table->solvers) {
        if (m.family == s.family && m.name != name) members.insert(m.name);
      }
      std::string others;
      for (const auto& m : members) others += (others.empty() ? "" : ", ") + m;
      why = fmt::format("{} has no switch of its own: {} disables {} ({}){}", name, sw,
                        table->family_description[s.family], s.family,
                        others.empty() ? "" : ", also " + others);
    } else {
      why = fmt::format("disables {}", name);
    }
    switch_reasons[sw].push_back(why);
    for (const auto& t : trials) switch_trials[sw].push_back(name + " " + t);
  }
  for (const auto& [sw, reasons] : switch_reasons) {
    auto line = assign(shell, sw, "0");
    if (!line) {
      std::fprintf(stderr, "convguard env: data/miopen/solvers.tsv: %s\n",
                   line.status().message().c_str());
      return 2;
    }
    for (const auto& r : reasons) comment(r);
    print_trials(switch_trials[sw]);
    std::printf("%s\n", line->c_str());
  }
  if (!switch_reasons.empty()) {
    // Where a MIOpen solver verified on a problem that another one failed, Find can be pinned to
    // it.
    for (const auto& [solver, trials] : bad) {
      if (solver.rfind("miopen:", 0) != 0) continue;
      for (const auto& t : trials) {
        const std::string problem = t.substr(t.find(": ") + 2);
        auto ok = verified_miopen.find(problem);
        if (ok == verified_miopen.end()) continue;
        comment(
            fmt::format("alternative for {}: {} verified there; MIOPEN_DEBUG_FIND_ONLY_SOLVER={} "
                        "pins Find to it (GEMM and FFT stay eligible)",
                        problem, ok->second, ok->second));
        break;
      }
    }
  }
  if (!list.empty()) {
    auto line = assign(shell, "CONVGUARD_SKIP_SOLVERS", list);
    if (!line) return 2;  // a constant name: cannot happen
    std::printf("%s\n", line->c_str());
  }
  return 0;
}

}  // namespace convguard::cli
