// convguard: convolutions that never hang. One file per subcommand (commands.hpp).
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "commands.hpp"
#include "models.hpp"
#include "probe/worker.hpp"

namespace {
void usage() {
  std::printf(
      "usage: convguard <command> [args]\n\n"
      "commands:\n"
      "  driver    run convolutions with MIOpenDriver's conv flags (verify, time, compare "
      "solvers)\n"
      "  solvers   list solvers, or each solver's verdict on a problem\n"
      "  probe     try every solver on every problem in a sandboxed worker; record the results\n"
      "  db        show, check, export, import, merge or clear the results database\n"
      "  env       print the shell profile the evidence supports (solvers to skip)\n"
      "  report    write a self-contained HTML report of the results database\n"
      "  models    list the model layer lists probe --model takes\n"
      "  bisect    find the size (or channels, batch) where a solver's status changes\n"
      "  doctor    check this system (or a snapshot) against known-bad versions and the "
      "evidence\n\n"
      "'convguard <command> --help' for a command's flags.\n");
}
}  // namespace

int dispatch(int argc, char** argv);

// No command ends in abort(): an allocation that fails anywhere (a buffer a size estimate did not
// foresee) is reported as out of memory, any other escaped exception as an internal error.
int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "convguard: out of memory\n");
    return 5;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convguard: internal error: %s\n", e.what());
    return 70;
  }
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "driver") return convguard::cli::driver_main(argc, argv);
  if (cmd == "solvers") return convguard::cli::solvers_main(argc, argv);
  if (cmd == "probe") return convguard::cli::probe_main(argc, argv);
  if (cmd == "db") return convguard::cli::db_main(argc, argv);
  if (cmd == "env") return convguard::cli::env_main(argc, argv);
  if (cmd == "report") return convguard::cli::report_main(argc, argv);
  if (cmd == "models") return convguard::cli::models_main(argc, argv);
  if (cmd == "bisect") return convguard::cli::bisect_main(argc, argv);
  if (cmd == "doctor") return convguard::cli::doctor_main(argc, argv);
  if (cmd == "worker")
    return convguard::probe::worker_main(argc, argv);  // hidden: started by probe
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage();
    return 0;
  }
  std::fprintf(stderr, "convguard: unknown command '%s'\n", cmd.c_str());
  usage();
  return 2;
}
