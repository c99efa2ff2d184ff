// pad_spatial(%N): the input grows to a multiple of N in every spatial dim with zeros appended
// at the end. Output rows past the exact output read only those zeros (and the problem's own end
// padding), so the first rows are the exact result and the rest are cropped; backward passes
// feed zeros for the extra dy rows, which add nothing.
#include <fmt/format.h>

#include "transforms/families.hpp"

namespace convguard::transforms {
namespace {

class PadSpatial final : public TransformSolver {
 public:
  PadSpatial(std::string id, const Solver& inner, MemoryFactory memory, std::int64_t multiple)
      : TransformSolver(std::move(id), inner, std::move(memory)), multiple_(multiple) {}

  Result<Decomposition> decompose(const Problem& p) const override {
    Problem q = dense_problem(p);
    bool changed = false;
    for (int d = 3 - p.spatial_dims; d < 3; ++d) {
      q.input[d] = (p.input[d] + multiple_ - 1) / multiple_ * multiple_;
      changed = changed || q.input[d] != p.input[d];
    }
    if (!changed)
      return not_applicable(
          fmt::format("{}: every input size already is a multiple of {}", id(), multiple_));
    Part part;
    part.x = identity_maps(x_desc(q));
    part.y = identity_maps(y_desc(q));
    part.w = identity_maps(w_desc(q));
    for (int d = 0; d < 3; ++d) {
      part.x.dim[2 + d] = range_map(q.input[d], 0, 0, p.input[d]);
      part.y.dim[2 + d] = range_map(q.output(d), 0, 0, p.output(d));
    }
    Decomposition dec;
    dec.problems.push_back(q);
    dec.parts.push_back(std::move(part));
    return dec;
  }

 private:
  std::int64_t multiple_;
};

}  // namespace

Result<std::unique_ptr<TransformSolver>> make_pad_spatial(std::string_view params,
                                                          const Solver& inner,
                                                          MemoryFactory memory) {
  if (params.empty() || params[0] != '%')
    return invalid_argument(
        fmt::format("pad_spatial({}): give %N (input sizes up to a multiple of N)", params));
  auto n = parse_count(params.substr(1), "pad_spatial");
  if (!n) return n.status();
  if (*n < 2) return invalid_argument("pad_spatial(%1) changes nothing: N must be at least 2");
  return std::unique_ptr<TransformSolver>(std::make_unique<PadSpatial>(
      fmt::format("xform:pad_spatial(%{}):{}", *n, inner.id()), inner, std::move(memory), *n));
}

}  // namespace convguard::transforms
