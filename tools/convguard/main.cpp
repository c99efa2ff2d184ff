// convguard: convolutions that never hang. One file per subcommand (commands.hpp).
#include <cstdio>
#include <string>

#include "commands.hpp"

namespace {
void usage() {
  std::printf(
      "usage: convguard <command> [args]\n\n"
      "commands:\n"
      "  driver    run convolutions with MIOpenDriver's conv flags (verify, time, compare "
      "solvers)\n"
      "  solvers   list solvers, or each solver's verdict on a problem\n\n"
      "'convguard <command> --help' for a command's flags.\n");
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "driver") return convguard::cli::driver_main(argc, argv);
  if (cmd == "solvers") return convguard::cli::solvers_main(argc, argv);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage();
    return 0;
  }
  std::fprintf(stderr, "convguard: unknown command '%s'\n", cmd.c_str());
  usage();
  return 2;
}
