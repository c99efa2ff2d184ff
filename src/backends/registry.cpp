#include "convguard/registry.hpp"

namespace convguard {

std::vector<const Solver*> all_solvers() {
  std::vector<const Solver*> v;
  for (const Solver* s : cpu_solvers()) v.push_back(s);
  return v;
}

const Solver* find_solver(std::string_view id) {
  for (const Solver* s : all_solvers()) {
    if (s->id() == id) return s;
  }
  return nullptr;
}

}  // namespace convguard
