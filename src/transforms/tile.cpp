// tile(HxW | DxHxW). Per spatial dim, a list of segments; the parts are their cartesian product.
// A tiled dim materialises the problem's padding in the gathered input (inner padding 0), so
// every inner problem is an ordinary convolution no larger than the tile.
#include <fmt/format.h>

#include <array>
#include <vector>

#include "convguard/canonical.hpp"
#include "transforms/families.hpp"

namespace convguard::transforms {
namespace {

struct Segment {
  std::int64_t x_begin = 0, x_len = 0;  // inner input in caller coordinates
  std::int64_t pad_begin = 0, pad_end = 0;
  std::int64_t y_begin = 0, y_len = 0;    // inner output (dy for backward-data)
  std::int64_t keep_lo = 0, keep_hi = 0;  // backward-data: the dx rows this segment owns
};

struct DimGeometry {
  std::int64_t in, out, filter_extent, stride, pad_begin, pad_end;
};

DimGeometry geometry(const Problem& p, int d) {
  return {p.input[d], p.output(d), p.filter_extent(d), p.stride[d], p.pad_begin[d], p.pad_end[d]};
}

// The untiled dim: the problem's own geometry.
Segment whole(const DimGeometry& g) {
  return {0, g.in, g.pad_begin, g.pad_end, 0, g.out, 0, g.in};
}

// Forward and backward-weights: output tiles of the largest length whose input span fits.
std::vector<Segment> output_tiles(const DimGeometry& g, std::int64_t tile) {
  const std::int64_t len = (tile - g.filter_extent) / g.stride + 1;
  std::vector<Segment> v;
  for (std::int64_t o0 = 0; o0 < g.out; o0 += len) {
    const std::int64_t n = std::min(len, g.out - o0);
    Segment s;
    s.x_begin = o0 * g.stride - g.pad_begin;
    s.x_len = (n - 1) * g.stride + g.filter_extent;
    s.y_begin = o0;
    s.y_len = n;
    v.push_back(s);
  }
  return v;
}

// Backward-data: dx tiles [i0, i0 + len), each with every dy row whose window reaches it, for
// the largest len whose inner inputs all fit the tile. Rows no window reaches get no segment
// (they are zero).
std::vector<Segment> input_tiles(const DimGeometry& g, std::int64_t tile) {
  for (std::int64_t len = std::min(tile, g.in); len >= 1; --len) {
    std::vector<Segment> v;
    bool fits = true;
    for (std::int64_t i0 = 0; i0 < g.in && fits; i0 += len) {
      const std::int64_t i1 = std::min(g.in, i0 + len);
      const std::int64_t lo =
          std::max<std::int64_t>(0, ceil_div(i0 + g.pad_begin - g.filter_extent + 1, g.stride));
      const std::int64_t hi = std::min(g.out - 1, floor_div(i1 - 1 + g.pad_begin, g.stride));
      if (lo > hi) continue;
      Segment s;
      s.x_begin = lo * g.stride - g.pad_begin;
      s.x_len = (hi - lo) * g.stride + g.filter_extent;
      s.y_begin = lo;
      s.y_len = hi - lo + 1;
      s.keep_lo = i0;
      s.keep_hi = i1;
      fits = s.x_len <= tile;
      v.push_back(s);
    }
    if (fits) return v;
  }
  return {};
}

class TileTransform final : public TransformSolver {
 public:
  TileTransform(std::string id, const Solver& inner, MemoryFactory memory,
                std::vector<std::int64_t> sizes)
      : TransformSolver(std::move(id), inner, std::move(memory)), sizes_(std::move(sizes)) {}

  Result<Decomposition> decompose(const Problem& p) const override {
    if (sizes_.size() == 3 && p.spatial_dims != 3)
      return not_applicable(fmt::format("{}: a DxHxW tile is for 3D problems", id()));
    const int first = 3 - static_cast<int>(sizes_.size());  // D only with DxHxW tiles
    std::array<std::vector<Segment>, 3> seg;
    bool split = false;
    for (int d = 0; d < 3; ++d) {
      const DimGeometry g = geometry(p, d);
      const std::int64_t tile = d >= first ? sizes_[d - first] : 0;
      // A dim is tiled when its input (with padding) exceeds the tile.
      if (tile == 0 || g.in + g.pad_begin + g.pad_end <= tile) {
        seg[d] = {whole(g)};
        continue;
      }
      if (tile < g.filter_extent)
        return not_applicable(fmt::format("{}: tile {} is smaller than the filter's extent {}",
                                          id(), tile, g.filter_extent));
      seg[d] =
          p.direction == Direction::backward_data ? input_tiles(g, tile) : output_tiles(g, tile);
      if (seg[d].empty())
        return not_applicable(
            fmt::format("{}: no dx tile of dim {} fits {} with a filter extent {} and stride {}",
                        id(), d, tile, g.filter_extent, g.stride));
      split = true;
    }
    if (!split) return not_applicable(fmt::format("{}: the problem already fits one tile", id()));

    Decomposition dec;
    dec.accumulate = p.direction == Direction::backward_weights;
    const Problem base = dense_problem(p);
    const IndexMaps w_all = identity_maps(w_desc(p));
    for (const Segment& sd : seg[0])
      for (const Segment& sh : seg[1])
        for (const Segment& sw : seg[2]) {
          const Segment* s[3] = {&sd, &sh, &sw};
          Problem q = base;
          for (int d = 0; d < 3; ++d) {
            q.input[d] = s[d]->x_len;
            q.pad_begin[d] = s[d]->pad_begin;
            q.pad_end[d] = s[d]->pad_end;
          }
          Part part;
          part.inner = add_problem(dec, q);
          const bool bwd_data = p.direction == Direction::backward_data;
          part.x.dim[0] = range_map(p.n, 0, 0, p.n);
          part.x.dim[1] = range_map(p.c, 0, 0, p.c);
          part.y.dim[0] = part.x.dim[0];
          part.y.dim[1] = range_map(p.k, 0, 0, p.k);
          for (int d = 0; d < 3; ++d) {
            const std::int64_t lo = bwd_data ? s[d]->keep_lo : 0;
            const std::int64_t hi = bwd_data ? s[d]->keep_hi : p.input[d];
            part.x.dim[2 + d] = range_map(s[d]->x_len, s[d]->x_begin, lo, hi);
            part.y.dim[2 + d] = range_map(s[d]->y_len, s[d]->y_begin, 0, p.output(d));
          }
          part.w = w_all;
          dec.parts.push_back(std::move(part));
        }
    return dec;
  }

 private:
  std::vector<std::int64_t> sizes_;
};

}  // namespace

Result<std::unique_ptr<TransformSolver>> make_tile(std::string_view params, const Solver& inner,
                                                   MemoryFactory memory) {
  std::vector<std::int64_t> sizes;
  std::size_t start = 0;
  while (start <= params.size()) {
    std::size_t end = params.find('x', start);
    if (end == std::string_view::npos) end = params.size();
    auto n = parse_count(params.substr(start, end - start), "tile");
    if (!n) return n.status();
    sizes.push_back(*n);
    start = end + 1;
  }
  if (sizes.size() == 1) sizes.push_back(sizes[0]);  // tile(32) is tile(32x32)
  if (sizes.size() > 3) return invalid_argument(fmt::format("tile({}): give HxW or DxHxW", params));
  std::string text = fmt::format("{}", sizes[0]);
  for (std::size_t i = 1; i < sizes.size(); ++i) text += fmt::format("x{}", sizes[i]);
  return std::unique_ptr<TransformSolver>(std::make_unique<TileTransform>(
      fmt::format("xform:tile({}):{}", text, inner.id()), inner, std::move(memory), sizes));
}

}  // namespace convguard::transforms
