#include "cpu/solvers/bwdd_rows.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cstdint>

#include "cpu/isa.hpp"
#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bwdd_rows_entry.hpp"

namespace convguard::cpu {
namespace {

using bwdd_rows::kBlockChannels;
using detail::Geometry;

// dy zero-padded so that every dx pixel's window is inside: (filter extent - 1) more than dx
// along each dimension, dy's pixel (od, oh, ow) at (od + top[0], oh + top[1], ow + top[2]).
// Never built whole (bwdd_rows_entry.hpp): only its width and offsets shape the item windows.
struct PaddedDy {
  std::int64_t w;
  std::int64_t top[3];
};
PaddedDy padded_dy(const Geometry& G) {
  const std::int64_t ext[3] = {(G.kd - 1) * G.dd, (G.kh - 1) * G.dh, (G.kw - 1) * G.dw};
  return {G.iw + ext[2], {ext[0] - G.pd, ext[1] - G.ph, ext[2] - G.pw}};
}
// Rows of a window plane: an item's dx rows and the dilated filter height below them.
std::int64_t window_rows(const Geometry& G) {
  return bwdd_rows::kRowsPerItem + (G.kh - 1) * G.dh;
}
std::int64_t window_floats(const Geometry& G) {
  return G.kg * G.kd * window_rows(G) * padded_dy(G).w;
}
// A thread's window at most (check() declines larger ones).
constexpr std::int64_t kWindowBytesLimit = 16 << 20;

std::int64_t channel_blocks(const Geometry& G) {
  return (G.cg + kBlockChannels - 1) / kBlockChannels;
}
std::int64_t reduction_rows(const Geometry& G) {
  return G.kg * G.taps();
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
  const std::int64_t window = 4 * window_floats(detail::geometry(p));
  if (window > kWindowBytesLimit)
    return not_applicable(
        fmt::format("its per-thread window of dy rows would take {} bytes, more than {}", window,
                    kWindowBytesLimit));
  return Status::ok();
}

StagingSpec BwdDataRowsSolver::staging(const Problem&) const {
  // Channels-first: dy read as it comes when dense fp32, dx written whole (no padding), the
  // filter as [K][Cg][taps].
  return StagingSpec{Order::channels_first, Order::channels_first, Padding{}, false};
}

void BwdDataRowsSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  layout.add(G.g * channel_blocks(G) * reduction_rows(G) * kBlockChannels);
  layout.add(2 * reduction_rows(G));  // tap offsets (int64)
}

Status BwdDataRowsSolver::compute(const Problem&, const StagedTensors& t, std::span<std::byte> ws,
                                  const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const PaddedDy P = padded_dy(G);
  float* w = layout.get(ws, first_scratch);
  auto* tap_at = reinterpret_cast<std::int64_t*>(layout.get(ws, first_scratch + 1));
  flip_filter(G, t.w, w);
  // Reduction row j = (k, flipped tap kd', kh', kw'): in an item's window, plane (k, kd'), kh'
  // dilated rows down, kw' dilated columns along.
  const std::int64_t rows = window_rows(G);
  for (std::int64_t k = 0, j = 0; k < G.kg; ++k)
    for (std::int64_t kd = 0; kd < G.kd; ++kd)
      for (std::int64_t kh = 0; kh < G.kh; ++kh)
        for (std::int64_t kw = 0; kw < G.kw; ++kw, ++j)
          tap_at[j] = ((k * G.kd + kd) * rows + kh * G.dh) * P.w + kw * G.dw;
  bwdd_rows::Args a{};
  a.n = G.n, a.g = G.g, a.cg = G.cg, a.kg = G.kg, a.depth = reduction_rows(G);
  a.id = G.id, a.ih = G.ih, a.iw = G.iw;
  a.od = G.od, a.oh = G.oh, a.ow = G.ow;
  a.kd = G.kd, a.dd = G.dd;
  for (int d = 0; d < 3; ++d) a.top[d] = P.top[d];
  a.window_rows = rows, a.padded_w = P.w;
  a.tap_at = tap_at, a.dy = t.y, a.w = w, a.dx = t.x;
  struct Windows;  // per-thread windows of padded dy rows
  a.windows = reusable_scratch<Windows, float>(static_cast<std::size_t>(
      omp_get_max_threads() * (window_floats(G) + bwdd_rows::kWindowSlack)));
  bwdd_rows::run_avx512(a);
  return Status::ok();
}

}  // namespace convguard::cpu
