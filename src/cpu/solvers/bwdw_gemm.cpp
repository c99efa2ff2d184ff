#include "cpu/solvers/bwdw_gemm.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu/isa.hpp"
#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bwdw_gemm_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

// What the GEMM runs on. 1x1: dy's plane as it is and x dy-shaped (x itself, or x' gathered at a
// stride or padding). Beyond 1x1 (stride 1, 2D/1D): x zero-padded to xs and dy re-pitched to xs's
// row length xs.w (its last xs.w - ow columns zero, `valid` clear there), so that tap (kh, kw) of
// dy's pixel q is x's pixel q + kh dh xs.w + kw dw: every (channel, tap) column one shifted row.
struct Shape {
  bool pitched = false, gathers = false;
  Padding pad;                    // x's (pitched)
  Sizes5 xs{};                    // x padded (pitched)
  std::int64_t plane = 0;         // dy's pixels per channel the kernel reads
  std::int64_t x_plane = 0;       // x's elements per channel the kernel reads
  std::int64_t taps = 1, dw = 0;  // dW's elements
  std::int64_t words = 0;         // 32-bit words per image: pixels (fp32) or pixel pairs (bf16)
  std::int64_t x_copy = 0, dy_copy = 0, valid_bytes = 0;  // elements and bytes of the copies
};

Shape shape_of(const Problem& p, bool bf16) {
  const Geometry G = detail::geometry(p);
  Shape s;
  s.pitched = p.filter != Dims3{1, 1, 1};
  s.taps = G.taps();
  s.dw = G.g * G.kg * G.cg * s.taps;
  if (s.pitched) {
    s.pad = forward_padding(p);
    s.xs = padded(sizes5(x_desc(p)), s.pad);
    s.plane = G.oh * s.xs.w;
    s.x_plane = s.xs.h * s.xs.w;
    s.x_copy = bf16 ? G.n * G.c() * s.x_plane : 0;  // fp32: the staging pads x
    s.dy_copy = G.n * G.k() * s.plane;
    s.valid_bytes = (s.plane + 7) / 8 + 16;
  } else {
    s.gathers =
        p.stride != Dims3{1, 1, 1} || p.pad_begin != Dims3{0, 0, 0} || p.pad_end != Dims3{0, 0, 0};
    s.plane = s.x_plane = G.out_spatial();
    s.x_copy = s.gathers ? G.n * G.c() * s.plane : 0;
  }
  s.words = bf16 ? (s.plane + 1) / 2 : s.plane;
  return s;
}

// About 1024 words per chunk (a 256 KiB panel, beside the 6 dy rows in L2), but no more chunks
// than 64 MiB of partial sums hold. Fixed by the problem alone.
std::int64_t chunk_words(const Geometry& G, const Shape& s) {
  const std::int64_t most_chunks = std::max<std::int64_t>(1, (std::int64_t{16} << 20) / s.dw);
  return std::max<std::int64_t>(1024, (G.n * s.words + most_chunks - 1) / most_chunks);
}
std::int64_t chunks(const Geometry& G, const Shape& s) {
  const std::int64_t per = chunk_words(G, s);
  return (G.n * s.words + per - 1) / per;
}

// 1x1 at a stride or padding: x' [n][c][od][oh][ow] = x[n][c][od sd - pd][oh sh - ph][ow sw -
// pw], 0 outside x, so that x''s pixels are dy's.
template <class T>
void gather_x(const Geometry& G, const T* x, T* out) {
  const std::int64_t planes = G.n * G.c(), ip = G.in_spatial(), op = G.out_spatial();
#pragma omp parallel for schedule(static)
  for (std::int64_t q = 0; q < planes; ++q)
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh) {
        T* to = out + q * op + (od * G.oh + oh) * G.ow;
        const std::int64_t d = od * G.sd - G.pd, h = oh * G.sh - G.ph;
        if (d < 0 || d >= G.id || h < 0 || h >= G.ih) {
          std::fill(to, to + G.ow, T{});
          continue;
        }
        const T* row = x + q * ip + (d * G.ih + h) * G.iw;
        for (std::int64_t ow = 0; ow < G.ow; ++ow) {
          const std::int64_t w = ow * G.sw - G.pw;
          to[ow] = w >= 0 && w < G.iw ? row[w] : T{};
        }
      }
}

// dy [n][k][oh][ow] re-pitched to rows of `pitch` (zero past ow).
template <class T>
void pitch_dy(const Geometry& G, const T* dy, std::int64_t pitch, T* out) {
  const std::int64_t rows = G.n * G.k() * G.oh;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    std::copy(dy + r * G.ow, dy + (r + 1) * G.ow, out + r * pitch);
    std::fill(out + r * pitch + G.ow, out + (r + 1) * pitch, T{});
  }
}

// A thread's panel (chunk words x 64 x 4 bytes) at most: check() declines larger ones.
constexpr std::int64_t kPanelBytesLimit = std::int64_t{64} << 20;

}  // namespace

std::string_view BwdwGemmSolver::id() const {
  return by_copy<std::string_view>(kernel_, "cpu:bwdw_gemm:avx512", "cpu:bwdw_gemm:avx2",
                                   "cpu:bwdw_gemm:avx512_bf16");
}

Status BwdwGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(isa_of(kernel_)); !s) return s;
  if (p.direction != Direction::backward_weights)
    return not_applicable("backward-weights only (forward and backward-data: cpu:nchw_gemm)");
  // Beyond 1x1 every tap must be one shift of x's rows: stride 1, and no depth to step over
  // (the re-pitched rows run through a 2D plane).
  if (p.filter != Dims3{1, 1, 1} && (p.stride != Dims3{1, 1, 1} || p.input[0] != 1 ||
                                     p.filter[0] != 1 || p.pad_begin[0] != 0 || p.output(0) != 1))
    return not_applicable(
        "beyond 1x1: stride 1 and 1D/2D only (cpu:bwdw_rows, cpu:bwdw, cpu:bf16_direct)");
  if (bf16())
    if (auto s = check_bf16_in_place(p, "cpu:bwdw_gemm:avx512"); !s) return s;
  // A dW over 64 MiB (one chunk's partial sums), copies over 16 GiB, or a reduction so long that
  // its chunks outgrow the panel limit, is declined. Each factor is bounded first so that no
  // product overflows.
  const Geometry G = detail::geometry(p);
  const Sizes5 xs = padded(sizes5(x_desc(p)), forward_padding(p));
  constexpr std::int64_t kCopyLimit = std::int64_t{4} << 30;  // elements
  if (bounded_product({G.g, G.kg, G.cg, G.taps(), 4}, kPanelBytesLimit) > kPanelBytesLimit ||
      bounded_product({G.n, G.c(), xs.h, xs.w}, kCopyLimit) > kCopyLimit ||
      bounded_product({G.n, G.k(), G.oh, xs.w}, kCopyLimit) > kCopyLimit ||
      bounded_product({G.n, G.c(), G.out_spatial()}, kCopyLimit) > kCopyLimit)
    return not_applicable("its dW over 64 MiB, or its copies of x or dy over 2^32 elements");
  const Shape s = shape_of(p, bf16());
  if (chunk_words(G, s) * 4 * bwdw_gemm::kPanelColumns > kPanelBytesLimit)
    return not_applicable(
        fmt::format("its per-thread panel would exceed {} bytes", kPanelBytesLimit));
  return Status::ok();
}

StagingSpec BwdwGemmSolver::staging(const Problem& p) const {
  // Channels-first x and dy read in place when dense (fp32 staging otherwise; beyond 1x1 x
  // zero-padded), dW written as [K][Cg][taps] (in place for such a caller). bf16 stages nothing.
  const Shape s = shape_of(p, bf16());
  StagingSpec spec{Order::channels_first, Order::channels_first, s.pad, false};
  spec.stage = !bf16();
  return spec;
}

void BwdwGemmSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  const Shape s = shape_of(p, bf16());
  const std::int64_t parts = chunks(G, s);
  // 0: partial sums per chunk (fp32 with one chunk writes dW directly); 1: x' or padded x; 2:
  // re-pitched dy; 3: valid bits; 4: tap offsets (int64). Counted in floats, bf16 two a float.
  layout.add(parts > 1 || bf16() ? parts * s.dw : 0);
  layout.add(bf16() ? (s.x_copy + 1) / 2 : s.x_copy);
  layout.add(bf16() ? (s.dy_copy + 1) / 2 : s.dy_copy);
  layout.add((s.valid_bytes + 7) / 8 * 2);  // whole 64-bit words: compute() clears them so
  layout.add(s.pitched ? 2 * s.taps : 0);
}

Status BwdwGemmSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const Shape s = shape_of(p, bf16());
  const std::int64_t parts = chunks(G, s);
  float* partial = parts > 1 || bf16() ? layout.get(ws, first_scratch) : t.w;
  bwdw_gemm::Args a{};
  a.n = G.n, a.g = G.g, a.kg = G.kg, a.cg = G.cg, a.taps = s.taps;
  a.plane = s.plane, a.x_plane = s.x_plane;
  a.x = bf16() ? t.caller->x.data : t.x;
  a.dy = bf16() ? t.caller->y.data : t.y;
  float* x_copy = layout.get(ws, first_scratch + 1);
  if (s.gathers) {
    if (bf16())
      gather_x(G, static_cast<const std::uint16_t*>(a.x), reinterpret_cast<std::uint16_t*>(x_copy));
    else
      gather_x(G, t.x, x_copy);
    a.x = x_copy;
  }
  if (s.pitched) {
    float* dy_copy = layout.get(ws, first_scratch + 2);
    if (bf16()) {
      auto* xc = reinterpret_cast<std::uint16_t*>(x_copy);
      pad_column_phases(static_cast<const std::uint16_t*>(a.x), sizes5(t.caller->x.desc), s.pad,
                        s.xs, 1, xc);
      a.x = xc;
      auto* dc = reinterpret_cast<std::uint16_t*>(dy_copy);
      pitch_dy(G, static_cast<const std::uint16_t*>(a.dy), s.xs.w, dc);
      a.dy = dc;
    } else {
      pitch_dy(G, t.y, s.xs.w, dy_copy);
      a.dy = dy_copy;
    }
    auto* valid = reinterpret_cast<std::uint64_t*>(layout.get(ws, first_scratch + 3));
    std::fill(valid, valid + (s.valid_bytes + 7) / 8, 0);
    for (std::int64_t q = 0; q < s.plane; ++q)
      if (q % s.xs.w < G.ow) valid[q / 64] |= std::uint64_t{1} << (q % 64);
    a.valid = valid;
    auto* tap_at = reinterpret_cast<std::int64_t*>(layout.get(ws, first_scratch + 4));
    for (std::int64_t kh = 0, t_ = 0; kh < G.kh; ++kh)
      for (std::int64_t kw = 0; kw < G.kw; ++kw, ++t_) tap_at[t_] = kh * G.dh * s.xs.w + kw * G.dw;
    a.tap_at = tap_at;
  }
  a.chunk_words = chunk_words(G, s);
  a.partial = partial;
  struct Panels;  // the kernel's per-thread panels
  a.panels = reusable_scratch<Panels, std::uint32_t>(
      static_cast<std::size_t>(omp_get_max_threads() * a.chunk_words * bwdw_gemm::kPanelColumns));
  by_copy(kernel_, &bwdw_gemm::run_avx512, &bwdw_gemm::run_avx2, &bwdw_gemm::run_bf16_avx512)(a);
  if (parts > 1 || bf16())
    add_partials_in_order(partial, parts, s.dw, t.w,
                          bf16() ? static_cast<std::uint16_t*>(t.caller->w.data) : nullptr);
  return Status::ok();
}

}  // namespace convguard::cpu
