// Transform ids: xform:<name>(<params>):<inner solver id>, the inner id itself possibly a
// transform. Parsing builds the solver; the registry keeps what it built (find_solver).
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "transforms/transform.hpp"

namespace convguard::transforms {

inline constexpr std::string_view kPrefix = "xform:";
// Whether `id` names a transform (built from its id, never listed) rather than a plain solver.
inline bool is_transform_id(std::string_view id) {
  return id.substr(0, kPrefix.size()) == kPrefix;
}

struct Resolver {
  // The inner solver for an id (plain or transform), or why there is none.
  std::function<Result<const Solver*>(std::string_view id)> find;
  // The memory calls for the inner solver's device (nullptr: host memory).
  std::function<MemoryFactory(const Solver& inner)> memory;
};

// Builds the transform `id` names; an error names what in the id is wrong.
[[nodiscard]] Result<std::unique_ptr<TransformSolver>> make_transform(std::string_view id,
                                                                      const Resolver& r);

struct TransformKind {
  const char* name;
  const char* syntax;   // "tile(HxW|DxHxW)"
  const char* example;  // "tile(32x32)"
  const char* what;
};
// Every transform family, in the order the probe tries them (cheapest first).
const std::vector<TransformKind>& transform_kinds();

}  // namespace convguard::transforms
