// pad_channels(c+N | c%N, k+N | k%N): per group, zero input channels (x, and w's C/G) and zero
// filters (w's K, y's channels) are added; the products they add are exact zeros, and the
// padded output channels are not kept.
#include <fmt/format.h>

#include "transforms/families.hpp"

namespace convguard::transforms {
namespace {

struct ChannelRule {
  char op = 0;  // 0: unchanged, '+': add n, '%': round up to a multiple of n
  std::int64_t n = 0;
  std::int64_t apply(std::int64_t v) const {
    if (op == '+') return v + n;
    if (op == '%') return (v + n - 1) / n * n;
    return v;
  }
  std::string text(char which) const { return fmt::format("{}{}{}", which, op, n); }
};

// Channel j of the padded tensor (groups of `padded` channels) to the caller's (groups of `real`).
std::vector<std::int64_t> grouped_map(std::int64_t groups, std::int64_t padded, std::int64_t real) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(groups * padded));
  for (std::int64_t j = 0; j < groups * padded; ++j) {
    const std::int64_t within = j % padded;
    v[j] = within < real ? (j / padded) * real + within : -1;
  }
  return v;
}

class PadChannels final : public TransformSolver {
 public:
  PadChannels(std::string id, const Solver& inner, MemoryFactory memory, ChannelRule c,
              ChannelRule k)
      : TransformSolver(std::move(id), inner, std::move(memory)), c_(c), k_(k) {}

  Result<Decomposition> decompose(const Problem& p) const override {
    const std::int64_t cg = p.c_per_group(), kg = p.k_per_group();
    const std::int64_t cg2 = c_.apply(cg), kg2 = k_.apply(kg);
    if (cg2 == cg && kg2 == kg)
      return not_applicable(
          fmt::format("{}: channels per group c={} k={} need no padding", id(), cg, kg));
    Problem q = dense_problem(p);
    q.c = p.g * cg2;
    q.k = p.g * kg2;
    Part part;
    const IndexMaps xi = identity_maps(x_desc(q)), yi = identity_maps(y_desc(q)),
                    wi = identity_maps(w_desc(q));
    part.x = xi;
    part.x.dim[1] = grouped_map(p.g, cg2, cg);
    part.y = yi;
    part.y.dim[1] = grouped_map(p.g, kg2, kg);
    part.w = wi;
    part.w.dim[0] = grouped_map(p.g, kg2, kg);
    part.w.dim[1] = grouped_map(1, cg2, cg);
    // Maps over n and spatial dims are the identity of the caller's sizes (unchanged here).
    Decomposition dec;
    dec.problems.push_back(q);
    dec.parts.push_back(std::move(part));
    return dec;
  }

 private:
  ChannelRule c_, k_;
};

}  // namespace

Result<std::unique_ptr<TransformSolver>> make_pad_channels(std::string_view params,
                                                           const Solver& inner,
                                                           MemoryFactory memory) {
  ChannelRule c, k;
  std::size_t start = 0;
  while (start < params.size()) {
    std::size_t end = params.find(',', start);
    if (end == std::string_view::npos) end = params.size();
    const std::string_view item = params.substr(start, end - start);
    if (item.size() < 3 || (item[0] != 'c' && item[0] != 'k') || (item[1] != '+' && item[1] != '%'))
      return invalid_argument(
          fmt::format("pad_channels({}): '{}' is not c+N, c%N, k+N or k%N", params, item));
    auto n = parse_count(item.substr(2), "pad_channels");
    if (!n) return n.status();
    ChannelRule& r = item[0] == 'c' ? c : k;
    if (r.op)
      return invalid_argument(fmt::format("pad_channels({}): {} given twice", params, item[0]));
    r = {item[1], *n};
    start = end + 1;
  }
  if (!c.op && !k.op)
    return invalid_argument("pad_channels(): give c+N, c%N, k+N or k%N (comma-separated)");
  const std::string text = c.op && k.op ? fmt::format("{},{}", c.text('c'), k.text('k'))
                           : c.op       ? c.text('c')
                                        : k.text('k');
  return std::unique_ptr<TransformSolver>(std::make_unique<PadChannels>(
      fmt::format("xform:pad_channels({}):{}", text, inner.id()), inner, std::move(memory), c, k));
}

}  // namespace convguard::transforms
