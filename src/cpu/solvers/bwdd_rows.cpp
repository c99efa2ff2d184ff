#include "cpu/solvers/bwdd_rows.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cstdint>
#include <cstring>

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
// Window planes: dy channels (fp32), or pairs of them (bf16: one 32-bit word per pixel).
std::int64_t window_planes(const Geometry& G, bool bf16) {
  return bf16 ? (G.kg + 1) / 2 : G.kg;
}
std::int64_t window_floats(const Geometry& G, bool bf16) {
  return window_planes(G, bf16) * G.kd * window_rows(G) * padded_dy(G).w;
}
// A thread's window at most (check() declines larger ones).
constexpr std::int64_t kWindowBytesLimit = 16 << 20;

std::int64_t channel_blocks(const Geometry& G) {
  return (G.cg + kBlockChannels - 1) / kBlockChannels;
}
// Reduction rows: (dy channel or channel pair, tap).
std::int64_t reduction_rows(const Geometry& G, bool bf16) {
  return window_planes(G, bf16) * G.taps();
}

// w [K][Cg][kd][kh][kw] flipped into [g][channel block][k][flipped tap][6] words, zero past Cg:
// fp32 values, or bf16 pairs of channels (2 k2, 2 k2 + 1), the first in the low half.
template <class T, class Word>
void flip_filter(const Geometry& G, const T* w, Word* to) {
  constexpr int per_word = sizeof(Word) / sizeof(T);
  const bool bf16 = per_word == 2;
  const std::int64_t blocks = channel_blocks(G), taps = G.taps();
  const std::int64_t planes = window_planes(G, bf16), depth = reduction_rows(G, bf16);
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < G.g; ++grp)
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t k2 = 0; k2 < planes; ++k2)
        for (std::int64_t t = 0; t < taps; ++t)
          for (int m = 0; m < kBlockChannels; ++m) {
            const std::int64_t c = b * kBlockChannels + m;
            T pair[per_word];
            for (int e = 0; e < per_word; ++e) {
              const std::int64_t k = k2 * per_word + e;
              pair[e] = c < G.cg && k < G.kg
                            ? w[((grp * G.kg + k) * G.cg + c) * taps + (taps - 1 - t)]
                            : T{};
            }
            Word word;
            std::memcpy(&word, pair, sizeof(word));
            to[((grp * blocks + b) * depth + k2 * taps + t) * kBlockChannels + m] = word;
          }
}

}  // namespace

std::string_view BwdDataRowsSolver::id() const {
  return bf16_ ? "cpu:bwdd_rows:avx512_bf16" : "cpu:bwdd_rows:avx512";
}

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
  if (bf16_)
    if (auto s = check_bf16_in_place(p, "cpu:bwdd_rows:avx512"); !s) return s;
  const std::int64_t window = 4 * window_floats(detail::geometry(p), bf16_);
  if (window > kWindowBytesLimit)
    return not_applicable(
        fmt::format("its per-thread window of dy rows would take {} bytes, more than {}", window,
                    kWindowBytesLimit));
  return Status::ok();
}

StagingSpec BwdDataRowsSolver::staging(const Problem&) const {
  // Channels-first: dy read as it comes when dense fp32, dx written whole (no padding), the
  // filter as [K][Cg][taps]. bf16 stages nothing: it reads and writes the caller's tensors.
  StagingSpec spec{Order::channels_first, Order::channels_first, Padding{}, false};
  spec.stage = !bf16_;
  return spec;
}

void BwdDataRowsSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  layout.add(G.g * channel_blocks(G) * reduction_rows(G, bf16_) * kBlockChannels);  // words
  layout.add(2 * reduction_rows(G, bf16_));  // tap offsets (int64)
}

Status BwdDataRowsSolver::compute(const Problem&, const StagedTensors& t, std::span<std::byte> ws,
                                  const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const PaddedDy P = padded_dy(G);
  float* w = layout.get(ws, first_scratch);
  auto* tap_at = reinterpret_cast<std::int64_t*>(layout.get(ws, first_scratch + 1));
  if (bf16_)
    flip_filter(G, static_cast<const std::uint16_t*>(t.caller->w.data),
                reinterpret_cast<std::uint32_t*>(w));
  else
    flip_filter(G, t.w, w);
  // Reduction row j = (k, flipped tap kd', kh', kw'): in an item's window, plane (k, kd'), kh'
  // dilated rows down, kw' dilated columns along.
  const std::int64_t rows = window_rows(G);
  for (std::int64_t k = 0, j = 0; k < window_planes(G, bf16_); ++k)
    for (std::int64_t kd = 0; kd < G.kd; ++kd)
      for (std::int64_t kh = 0; kh < G.kh; ++kh)
        for (std::int64_t kw = 0; kw < G.kw; ++kw, ++j)
          tap_at[j] = ((k * G.kd + kd) * rows + kh * G.dh) * P.w + kw * G.dw;
  bwdd_rows::Args a{};
  a.n = G.n, a.g = G.g, a.cg = G.cg, a.kg = G.kg, a.depth = reduction_rows(G, bf16_);
  a.id = G.id, a.ih = G.ih, a.iw = G.iw;
  a.od = G.od, a.oh = G.oh, a.ow = G.ow;
  a.kd = G.kd, a.dd = G.dd;
  for (int d = 0; d < 3; ++d) a.top[d] = P.top[d];
  a.window_rows = rows, a.padded_w = P.w;
  a.window_planes = window_planes(G, bf16_);
  a.tap_at = tap_at, a.w = w;
  a.dy = bf16_ ? t.caller->y.data : t.y;
  a.dx = bf16_ ? t.caller->x.data : t.x;
  struct Windows;  // per-thread windows of padded dy rows
  a.windows = reusable_scratch<Windows, float>(static_cast<std::size_t>(
      omp_get_max_threads() * (window_floats(G, bf16_) + bwdd_rows::kWindowSlack)));
  if (bf16_)
    bwdd_rows::run_bf16_avx512(a);
  else
    bwdd_rows::run_avx512(a);
  return Status::ok();
}

}  // namespace convguard::cpu
