// convguard: convolutions that never hang. One file per subcommand (commands.hpp).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "convguard/memory.hpp"
#include "cpu/blas.hpp"
#include "cpu/isa.hpp"
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

// The CONVGUARD_* variables that hold a value with a grammar, checked before any command runs: a
// mistyped value was once silently ignored (CONVGUARD_MEMORY_LIMIT=8gb meant "90% of free
// memory", CONVGUARD_CPU_ISA=avx-2 meant "every ISA", a CONVGUARD_BLAS that did not load meant
// the system's BLAS). Paths that are opened anyway (CONVGUARD_DB, CONVGUARD_DATA_DIR) fail where
// they are opened, naming themselves; CONVGUARD_SKIP_SOLVERS holds globs, any text is one.
convguard::Status check_environment() {
  if (auto st = convguard::check_memory_limit_variable(); !st) return st;
  if (auto st = convguard::cpu::check_isa_variable(); !st) return st;
  if (auto st = convguard::cpu::blas::check_blas_variable(); !st) return st;
  // A plugin path (one with a '/') that names no file; bare names are searched by dlopen, and
  // what fails to load is reported where plugins load.
  if (const char* env = std::getenv("CONVGUARD_PLUGINS")) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ':');) {
      struct stat st {};
      if (item.find('/') != std::string::npos && ::stat(item.c_str(), &st) != 0)
        return convguard::invalid_argument("environment variable CONVGUARD_PLUGINS: " + item +
                                           ": no such file");
    }
  }
  return convguard::Status::ok();
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
  // Not in a worker: its prober checked the environment it passes on, and a worker loads nothing
  // before its protocol descriptors are set up (probe/worker.cpp).
  if (cmd != "worker") {
    if (auto st = check_environment(); !st) {
      std::fprintf(stderr, "convguard: %s\n", st.message().c_str());
      return 2;
    }
  }
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
