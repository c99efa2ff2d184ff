// split_batch(N) and split_groups(G): the problem in independent slices. Batch slices share the
// filter (backward-weights adds their dw); group slices own disjoint channels, filters and dw.
#include <fmt/format.h>

#include "transforms/families.hpp"

namespace convguard::transforms {
namespace {

enum class Axis { batch, groups };

class Split final : public TransformSolver {
 public:
  Split(std::string id, const Solver& inner, MemoryFactory memory, Axis axis, std::int64_t most)
      : TransformSolver(std::move(id), inner, std::move(memory)), axis_(axis), most_(most) {}

  Result<Decomposition> decompose(const Problem& p) const override {
    const std::int64_t total = axis_ == Axis::batch ? p.n : p.g;
    if (most_ >= total)
      return not_applicable(fmt::format("{}: {} {} fit one part", id(), total,
                                        axis_ == Axis::batch ? "images" : "groups"));
    Decomposition dec;
    dec.accumulate = axis_ == Axis::batch && p.direction == Direction::backward_weights;
    const Problem base = dense_problem(p);
    for (std::int64_t first = 0; first < total; first += most_) {
      const std::int64_t count = std::min(most_, total - first);
      Problem q = base;
      if (axis_ == Axis::batch) {
        q.n = count;
      } else {
        q.g = count;
        q.c = count * p.c_per_group();
        q.k = count * p.k_per_group();
      }
      Part part{0, identity_maps(x_desc(q)), identity_maps(w_desc(q)), identity_maps(y_desc(q))};
      if (axis_ == Axis::batch) {
        part.x.dim[0] = range_map(count, first, 0, p.n);
        part.y.dim[0] = part.x.dim[0];
      } else {
        part.x.dim[1] = range_map(q.c, first * p.c_per_group(), 0, p.c);
        part.y.dim[1] = range_map(q.k, first * p.k_per_group(), 0, p.k);
        part.w.dim[0] = part.y.dim[1];
      }
      part.inner = add_problem(dec, q);
      dec.parts.push_back(std::move(part));
    }
    return dec;
  }

 private:
  Axis axis_;
  std::int64_t most_;
};

Result<std::unique_ptr<TransformSolver>> make_split(std::string_view params, const Solver& inner,
                                                    MemoryFactory memory, Axis axis) {
  const char* name = axis == Axis::batch ? "split_batch" : "split_groups";
  auto n = parse_count(params, name);
  if (!n) return n.status();
  return std::unique_ptr<TransformSolver>(std::make_unique<Split>(
      fmt::format("xform:{}({}):{}", name, *n, inner.id()), inner, std::move(memory), axis, *n));
}

}  // namespace

Result<std::unique_ptr<TransformSolver>> make_split_batch(std::string_view params,
                                                          const Solver& inner,
                                                          MemoryFactory memory) {
  return make_split(params, inner, std::move(memory), Axis::batch);
}

Result<std::unique_ptr<TransformSolver>> make_split_groups(std::string_view params,
                                                           const Solver& inner,
                                                           MemoryFactory memory) {
  return make_split(params, inner, std::move(memory), Axis::groups);
}

}  // namespace convguard::transforms
