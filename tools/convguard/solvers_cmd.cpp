// convguard solvers [PROBLEM [ID...]]: every solver in preference order and the transforms that
// wrap them; given a problem, each one's verdict on it (applicable, workspace, or the reason it
// declines), and the verdict of any further ids named (transforms such as
// xform:tile(32x32):cpu:direct are built from their ids, so they are named, not listed).
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "transforms/parse.hpp"

namespace convguard::cli {
namespace {

void print_verdict(const Solver& s, const Problem& p) {
  const Status st = s.check(p);
  if (st) {
    auto ws = s.workspace_bytes(p);
    std::printf("  %-24s applicable   workspace %.2f MiB\n", std::string(s.id()).c_str(),
                ws ? static_cast<double>(*ws) / (1 << 20) : 0.0);
  } else {
    std::printf("  %-24s declines     %s\n", std::string(s.id()).c_str(), st.message().c_str());
  }
}

void print_transforms() {
  std::printf("# transforms: xform:NAME(PARAMS):SOLVER wraps any solver above (or a transform)\n");
  for (const auto& k : transforms::transform_kinds())
    std::printf("#   %-30s %s (e.g. xform:%s:cpu:direct)\n", k.syntax, k.what, k.example);
}

}  // namespace

int solvers_main(int argc, char** argv) {
  if (argc == 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h")) {
    std::printf("usage: convguard solvers ['PROBLEM STRING' [SOLVER ID...]]\n");
    return 0;
  }
  if (argc == 2) {
    for (const Solver* s : all_solvers()) std::printf("%s\n", std::string(s->id()).c_str());
    print_transforms();
    return 0;
  }
  auto p = parse_problem(argv[2]);
  if (!p) {
    std::fprintf(stderr, "convguard solvers: %s\n", p.status().message().c_str());
    return 2;
  }
  std::vector<const Solver*> named;
  for (int i = 3; i < argc; ++i) {
    auto s = resolve_solver(argv[i]);
    if (!s) {
      std::fprintf(stderr, "convguard solvers: %s\n", s.status().message().c_str());
      return 2;
    }
    named.push_back(*s);
  }
  std::printf("%s\n", to_canonical(*p).c_str());
  if (named.empty()) named = all_solvers();
  for (const Solver* s : named) print_verdict(*s, *p);
  return 0;
}

}  // namespace convguard::cli
