#include "cpu/solvers/bwdd_rows.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu/isa.hpp"
#include "cpu/solvers/bwdd_rows_entry.hpp"

namespace convguard::cpu {
namespace {

using bwdd_rows::kBlockChannels;
using detail::Geometry;

// dy zero-padded so that every dx pixel's window is inside: (filter extent - 1) more than dx
// along each dimension, dy's pixel (od, oh, ow) at (od + top[0], oh + top[1], ow + top[2]).
struct PaddedDy {
  std::int64_t d, h, w;
  std::int64_t top[3];
  std::int64_t plane() const { return d * h * w; }
};
PaddedDy padded_dy(const Geometry& G) {
  const std::int64_t ext[3] = {(G.kd - 1) * G.dd, (G.kh - 1) * G.dh, (G.kw - 1) * G.dw};
  return {
      G.id + ext[0], G.ih + ext[1], G.iw + ext[2], {ext[0] - G.pd, ext[1] - G.ph, ext[2] - G.pw}};
}

std::int64_t channel_blocks(const Geometry& G) {
  return (G.cg + kBlockChannels - 1) / kBlockChannels;
}
std::int64_t reduction_rows(const Geometry& G) {
  return G.kg * G.taps();
}

// Floats past the padded dy that vector reads beyond its last row may touch (8 vectors).
constexpr std::int64_t kSlack = 8 * 16;

void pad_dy(const Geometry& G, const PaddedDy& P, const float* dy, float* to) {
  const std::int64_t planes = G.n * G.k();
#pragma omp parallel for
  for (std::int64_t pc = 0; pc < planes; ++pc) {
    float* plane = to + pc * P.plane();
    std::fill(plane, plane + P.plane(), 0.0f);
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh) {
        const std::int64_t d = od + P.top[0], h = oh + P.top[1];
        if (d >= P.d || h >= P.h) continue;  // end padding beyond what dx reads
        const std::int64_t count = std::min(G.ow, P.w - P.top[2]);
        std::memcpy(plane + (d * P.h + h) * P.w + P.top[2],
                    dy + ((pc * G.od + od) * G.oh + oh) * G.ow, sizeof(float) * count);
      }
  }
  std::fill(to + planes * P.plane(), to + planes * P.plane() + kSlack, 0.0f);
}

// w [K][Cg][kd][kh][kw] flipped into [g][channel block][k][flipped tap][6], zero past Cg.
void flip_filter(const Geometry& G, const float* w, float* to) {
  const std::int64_t blocks = channel_blocks(G), taps = G.taps(), depth = reduction_rows(G);
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < G.g; ++grp)
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t k = 0; k < G.kg; ++k)
        for (std::int64_t t = 0; t < taps; ++t)
          for (int m = 0; m < kBlockChannels; ++m) {
            const std::int64_t c = b * kBlockChannels + m;
            const std::int64_t j = k * taps + t;
            to[((grp * blocks + b) * depth + j) * kBlockChannels + m] =
                c < G.cg ? w[((grp * G.kg + k) * G.cg + c) * taps + (taps - 1 - t)] : 0.0f;
          }
}

}  // namespace

Status BwdDataRowsSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(Isa::avx512); !s) return s;
  if (p.direction != Direction::backward_data)
    return not_applicable("backward-data only (forward: cpu:nchw_gemm; weights: cpu:bwdw_rows)");
  if (p.stride != Dims3{1, 1, 1})
    return not_applicable("stride 1 only (strided: cpu:bf16_direct's phases, cpu:implicit_gemm)");
  for (int d = 0; d < 3; ++d)
    if (p.pad_begin[d] > (p.filter[d] - 1) * p.dilation[d])
      return not_applicable(
          fmt::format("a padding of {} beyond the dilated filter's extent {} along dimension {}",
                      p.pad_begin[d], (p.filter[d] - 1) * p.dilation[d], d));
  return Status::ok();
}

StagingSpec BwdDataRowsSolver::staging(const Problem&) const {
  // Channels-first: dy read as it comes when dense fp32, dx written whole (no padding), the
  // filter as [K][Cg][taps].
  return StagingSpec{Order::channels_first, Order::channels_first, Padding{}, false};
}

void BwdDataRowsSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  layout.add(G.n * G.k() * padded_dy(G).plane() + kSlack);
  layout.add(G.g * channel_blocks(G) * reduction_rows(G) * kBlockChannels);
  layout.add(2 * reduction_rows(G));  // tap offsets (int64)
}

Status BwdDataRowsSolver::compute(const Problem&, const StagedTensors& t, std::span<std::byte> ws,
                                  const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const PaddedDy P = padded_dy(G);
  float* dy = layout.get(ws, first_scratch);
  float* w = layout.get(ws, first_scratch + 1);
  auto* tap_at = reinterpret_cast<std::int64_t*>(layout.get(ws, first_scratch + 2));
  pad_dy(G, P, t.y, dy);
  flip_filter(G, t.w, w);
  // Reduction row j = (k, flipped tap kd', kh', kw'): channel k's plane, kd' and kh' dilated rows
  // down, kw' dilated columns along.
  for (std::int64_t k = 0, j = 0; k < G.kg; ++k)
    for (std::int64_t kd = 0; kd < G.kd; ++kd)
      for (std::int64_t kh = 0; kh < G.kh; ++kh)
        for (std::int64_t kw = 0; kw < G.kw; ++kw, ++j)
          tap_at[j] = k * P.plane() + (kd * G.dd * P.h + kh * G.dh) * P.w + kw * G.dw;
  bwdd_rows::Args a{};
  a.n = G.n, a.g = G.g, a.cg = G.cg, a.depth = reduction_rows(G);
  a.id = G.id, a.ih = G.ih, a.iw = G.iw;
  a.dy_group = G.kg * P.plane(), a.dy_step_d = P.h * P.w, a.dy_step_h = P.w;
  a.tap_at = tap_at, a.dy = dy, a.w = w, a.dx = t.x;
  bwdd_rows::run_avx512(a);
  return Status::ok();
}

}  // namespace convguard::cpu
