// convguard solvers [PROBLEM]: every solver in preference order and, given a problem, its
// verdict on it (applicable, workspace, or the reason it declines).
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"

namespace convguard::cli {

int solvers_main(int argc, char** argv) {
  if (argc > 3 ||
      (argc == 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h"))) {
    std::printf("usage: convguard solvers ['PROBLEM STRING']\n");
    return argc > 3 ? 2 : 0;
  }
  if (argc == 2) {
    for (const Solver* s : all_solvers()) std::printf("%s\n", std::string(s->id()).c_str());
    return 0;
  }
  auto p = parse_problem(argv[2]);
  if (!p) {
    std::fprintf(stderr, "convguard solvers: %s\n", p.status().message().c_str());
    return 2;
  }
  std::printf("%s\n", to_canonical(*p).c_str());
  for (const Solver* s : all_solvers()) {
    const Status st = s->check(*p);
    if (st) {
      auto ws = s->workspace_bytes(*p);
      std::printf("  %-24s applicable   workspace %.2f MiB\n", std::string(s->id()).c_str(),
                  ws ? static_cast<double>(*ws) / (1 << 20) : 0.0);
    } else {
      std::printf("  %-24s declines     %s\n", std::string(s->id()).c_str(), st.message().c_str());
    }
  }
  return 0;
}

}  // namespace convguard::cli
