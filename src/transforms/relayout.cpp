// relayout(nhwc | nchw): the same problem with all three tensors dense in one layout; the copies
// are the whole transform.
#include <fmt/format.h>

#include "transforms/families.hpp"

namespace convguard::transforms {
namespace {

class Relayout final : public TransformSolver {
 public:
  Relayout(std::string id, const Solver& inner, MemoryFactory memory, Layout layout)
      : TransformSolver(std::move(id), inner, std::move(memory)), layout_(layout) {}

  Result<Decomposition> decompose(const Problem& p) const override {
    Problem q = dense_problem(p);
    q.x_layout = q.w_layout = q.y_layout = layout_;
    const bool dense = p.x_strides.empty() && p.w_strides.empty() && p.y_strides.empty();
    if (dense && p.x_layout == layout_ && p.w_layout == layout_ && p.y_layout == layout_)
      return not_applicable(fmt::format("{}: the tensors already are dense {}", id(),
                                        to_string(layout_, p.spatial_dims)));
    Part part{0, identity_maps(x_desc(q)), identity_maps(w_desc(q)), identity_maps(y_desc(q))};
    Decomposition dec;
    dec.problems.push_back(q);
    dec.parts.push_back(std::move(part));
    return dec;
  }

 private:
  Layout layout_;
};

}  // namespace

Result<std::unique_ptr<TransformSolver>> make_relayout(std::string_view params, const Solver& inner,
                                                       MemoryFactory memory) {
  std::optional<Layout> l;
  if (params == "nchw" || params == "ncdhw") l = Layout::nchw;
  if (params == "nhwc" || params == "ndhwc") l = Layout::nhwc;
  if (!l) return invalid_argument(fmt::format("relayout({}): give nchw or nhwc", params));
  return std::unique_ptr<TransformSolver>(std::make_unique<Relayout>(
      fmt::format("xform:relayout({}):{}", *l == Layout::nchw ? "nchw" : "nhwc", inner.id()), inner,
      std::move(memory), *l));
}

}  // namespace convguard::transforms
