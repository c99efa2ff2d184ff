// convguard env: the shell profile the evidence supports. For convguard's own library,
// CONVGUARD_SKIP_SOLVERS lists every solver recorded hang, crash or wrong on this device (selection
// never picks them anyway; the variable also keeps them out of -1 / first-applicable choices and
// out of programs that have no database). Each entry carries a comment naming the trials that
// justify it. With no bad evidence it says so and disables nothing.
// (MIOpen's MIOPEN_DEBUG_* switches join here with the MIOpen plugin: issue 6.)
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <vector>

#include "commands.hpp"
#include "db/store.hpp"
#include "flags.hpp"
#include "probe/device.hpp"

namespace convguard::cli {

int env_main(int argc, char** argv) {
  Flags f({{0, "db", "",
            "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
           {0, "shell", "bash", "bash, fish or powershell"},
           {0, "all-devices", "",
            "use the evidence of every device in the database, not just this one", true},
           {'h', "help", "", "print this help", true}});
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard env: %s\n", st.message().c_str());
    return 2;
  }
  if (f.on("help")) {
    std::printf("usage: convguard env [--shell bash|fish|powershell] [--db PATH]\n%s",
                f.usage().c_str());
    return 0;
  }
  const std::string shell = f.str("shell");
  if (shell != "bash" && shell != "fish" && shell != "powershell") {
    std::fprintf(stderr, "convguard env: --shell: '%s' is not bash, fish or powershell\n",
                 shell.c_str());
    return 2;
  }
  if (!f.positional().empty()) {
    std::fprintf(stderr, "convguard env: unexpected argument '%s'\n", f.positional()[0].c_str());
    return 2;
  }
  auto store = db::Store::open(f.given("db") ? f.str("db") : db::default_path());
  if (!store) {
    std::fprintf(stderr, "convguard env: %s\n", store.status().message().c_str());
    return 2;
  }
  const std::string device = f.on("all-devices") ? "" : probe::cpu_device().fingerprint;
  std::map<std::string, std::vector<std::string>> bad;  // solver -> "status: problem"
  for (const auto& t : (*store)->all(device)) {
    if (t.status == "hang" || t.status == "crash" || t.status == "wrong") {
      bad[t.solver].push_back(t.status + ": " + t.problem);
    }
  }
  const char* c = "#";  // the comment marker of all three shells
  std::printf("%s convguard env: generated from %s (%s)\n", c, (*store)->path().c_str(),
              f.on("all-devices") ? "all devices" : "this device");
  if (bad.empty()) {
    std::printf("%s no solver is recorded hang, crash or wrong here: nothing to disable\n", c);
    return 0;
  }
  std::string list;
  for (const auto& [solver, trials] : bad) {
    std::printf("%s %s: %zu bad trial(s):\n", c, solver.c_str(), trials.size());
    for (std::size_t i = 0; i < trials.size() && i < 5; ++i)
      std::printf("%s   %s\n", c, trials[i].c_str());
    if (trials.size() > 5)
      std::printf("%s   ... and %zu more (convguard db show)\n", c, trials.size() - 5);
    list += (list.empty() ? "" : ",") + solver;
  }
  if (shell == "bash")
    std::printf("export CONVGUARD_SKIP_SOLVERS='%s'\n", list.c_str());
  else if (shell == "fish")
    std::printf("set -gx CONVGUARD_SKIP_SOLVERS '%s'\n", list.c_str());
  else
    std::printf("$env:CONVGUARD_SKIP_SOLVERS = '%s'\n", list.c_str());
  return 0;
}

}  // namespace convguard::cli
