#include "cpu/solvers/pointwise.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "cpu/solvers/pointwise_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

struct TileShape {
  int rows, cols;
};
TileShape tile_shape(Isa isa) {
  return isa == Isa::avx512 ? TileShape{pointwise::kRowsAvx512, pointwise::kColsAvx512}
                            : TileShape{pointwise::kRowsAvx2, pointwise::kColsAvx2};
}

// GEMM rows and reduction length per group: output/input channels forward, the reverse
// backward-data.
std::int64_t gemm_rows(const Geometry& G, bool fwd) {
  return fwd ? G.kg : G.cg;
}
std::int64_t gemm_depth(const Geometry& G, bool fwd) {
  return fwd ? G.cg : G.kg;
}

std::int64_t packed_filter_floats(const Problem& p, int rows) {
  const Geometry G = detail::geometry(p);
  const bool fwd = p.direction == Direction::forward;
  return G.g * ((gemm_rows(G, fwd) + rows - 1) / rows) * rows * gemm_depth(G, fwd);
}

// w [K][Cg] as [g][row block][depth][rows], zero past the last row.
void pack_filter(const Geometry& G, bool fwd, int rows, const float* w, float* out) {
  const std::int64_t m = gemm_rows(G, fwd), depth = gemm_depth(G, fwd);
  const std::int64_t blocks = (m + rows - 1) / rows;
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < G.g; ++grp)
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t d = 0; d < depth; ++d)
        for (int r = 0; r < rows; ++r) {
          const std::int64_t row = b * rows + r;
          float v = 0.f;
          if (row < m)
            v = fwd ? w[(grp * G.kg + row) * G.cg + d] : w[(grp * G.kg + d) * G.cg + row];
          out[((grp * blocks + b) * depth + d) * rows + r] = v;
        }
}

// Per output pixel, its input pixel (-1: in the padding). Counts the pixels found in `found`.
std::vector<std::int64_t> input_pixels(const Geometry& G, std::int64_t& found) {
  std::vector<std::int64_t> at;
  at.reserve(static_cast<std::size_t>(G.out_spatial()));
  found = 0;
  for (std::int64_t od = 0; od < G.od; ++od)
    for (std::int64_t oh = 0; oh < G.oh; ++oh)
      for (std::int64_t ow = 0; ow < G.ow; ++ow) {
        const std::int64_t d = od * G.sd - G.pd, h = oh * G.sh - G.ph, w = ow * G.sw - G.pw;
        const bool inside = d >= 0 && d < G.id && h >= 0 && h < G.ih && w >= 0 && w < G.iw;
        at.push_back(inside ? (d * G.ih + h) * G.iw + w : -1);
        found += inside;
      }
  return at;
}

}  // namespace

std::string_view PointwiseSolver::id() const {
  return isa_ == Isa::avx512 ? "cpu:pointwise:avx512" : "cpu:pointwise:avx2";
}

Status PointwiseSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(isa_); !s) return s;
  if (p.direction == Direction::backward_weights)
    return not_applicable("backward-weights is not implemented (cpu:bwdw computes it)");
  if (p.filter[0] != 1 || p.filter[1] != 1 || p.filter[2] != 1)
    return not_applicable(fmt::format("1x1 filters only (this one is {}x{}x{})", p.filter[0],
                                      p.filter[1], p.filter[2]));
  return Status::ok();
}

StagingSpec PointwiseSolver::staging(const Problem&) const {
  return StagingSpec{Order::channels_first, Order::channels_first, Padding{}, false};
}

void PointwiseSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  layout.add(packed_filter_floats(p, tile_shape(isa_).rows));
}

Status PointwiseSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                                const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const bool fwd = p.direction == Direction::forward;
  const TileShape shape = tile_shape(isa_);
  float* filter = layout.get(ws, first_scratch);
  pack_filter(G, fwd, shape.rows, t.w, filter);

  std::int64_t found = 0;
  const std::vector<std::int64_t> pixels = input_pixels(G, found);
  std::vector<std::int64_t> identity(pixels.size());
  for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<std::int64_t>(i);
  std::vector<float> panels(static_cast<std::size_t>(omp_get_max_threads()) * gemm_depth(G, fwd) *
                            shape.cols);

  pointwise::Args a{};
  a.n = G.n, a.g = G.g, a.m = gemm_rows(G, fwd), a.depth = gemm_depth(G, fwd);
  a.columns = G.out_spatial();
  a.a = filter, a.panels = panels.data();
  if (fwd) {
    a.in = t.x, a.in_plane = G.in_spatial(), a.gather = pixels.data();
    a.out = t.y, a.out_plane = G.out_spatial(), a.scatter = identity.data();
  } else {
    a.in = t.y, a.in_plane = G.out_spatial(), a.gather = identity.data();
    a.out = t.x, a.out_plane = G.in_spatial(), a.scatter = pixels.data();
    // A stride above 1 leaves input pixels that no output pixel reads: their gradient is zero.
    if (found < G.in_spatial()) {
      const std::int64_t total = G.n * G.c() * G.in_spatial();
#pragma omp parallel for
      for (std::int64_t i = 0; i < total; ++i) t.x[i] = 0.f;
    }
  }
  if (isa_ == Isa::avx512)
    pointwise::run_avx512(a);
  else
    pointwise::run_avx2(a);
  return Status::ok();
}

}  // namespace convguard::cpu
