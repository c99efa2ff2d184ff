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

// 32-bit words per pixel row: pixels (fp32) or pixel pairs (bf16).
std::int64_t words_per_image(const Geometry& G, bool bf16) {
  const std::int64_t plane = G.out_spatial();
  return bf16 ? (plane + 1) / 2 : plane;
}

// About 1024 words per chunk (a 256 KiB panel, beside the 6 dy rows in L2), but no more chunks
// than 64 MiB of partial sums hold. Fixed by the problem alone.
std::int64_t chunk_words(const Geometry& G, bool bf16) {
  const std::int64_t total = G.n * words_per_image(G, bf16), dw = G.g * G.kg * G.cg;
  const std::int64_t most_chunks = std::max<std::int64_t>(1, (std::int64_t{16} << 20) / dw);
  return std::max<std::int64_t>(1024, (total + most_chunks - 1) / most_chunks);
}
std::int64_t chunks(const Geometry& G, bool bf16) {
  const std::int64_t per = chunk_words(G, bf16);
  return (G.n * words_per_image(G, bf16) + per - 1) / per;
}

// A strided or padded 1x1 layer reads x at some pixels only: they are gathered first into a
// dy-shaped x' (zero where an output pixel's input is padding), so that x''s pixels are dy's.
bool gathers_x(const Problem& p) {
  return p.stride != Dims3{1, 1, 1} || p.pad_begin != Dims3{0, 0, 0} || p.pad_end != Dims3{0, 0, 0};
}

// x' [n][c][od][oh][ow] = x[n][c][od sd - pd][oh sh - ph][ow sw - pw], 0 outside x.
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

// A thread's panel (chunk words x 64 x 4 bytes) at most: check() declines larger ones.
constexpr std::int64_t kPanelBytesLimit = std::int64_t{64} << 20;

}  // namespace

std::string_view BwdwGemmSolver::id() const {
  return bf16_ ? "cpu:bwdw_gemm:avx512_bf16" : "cpu:bwdw_gemm:avx512";
}

Status BwdwGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(Isa::avx512); !s) return s;
  if (p.direction != Direction::backward_weights)
    return not_applicable("backward-weights only (forward and backward-data: cpu:nchw_gemm)");
  if (p.filter != Dims3{1, 1, 1})
    return not_applicable(fmt::format(
        "1x1 filters only (this one is {}x{}x{}: cpu:bwdw_rows, cpu:bwdw, cpu:bf16_direct)",
        p.filter[0], p.filter[1], p.filter[2]));
  if (bf16_)
    if (auto s = check_bf16_in_place(p, "cpu:bwdw_gemm:avx512"); !s) return s;
  // A dW over 64 MiB (one chunk's partial sums), or a reduction so long that its chunks outgrow
  // the panel limit, is declined. Each factor is bounded first so that no product overflows.
  const Geometry G = detail::geometry(p);
  if (bounded_product({G.n, G.c(), G.out_spatial()}, std::int64_t{1} << 48) >
          (std::int64_t{1} << 48) ||
      bounded_product({G.g, G.kg, G.cg, 4}, kPanelBytesLimit) > kPanelBytesLimit ||
      chunk_words(G, bf16_) * 4 * bwdw_gemm::kPanelColumns > kPanelBytesLimit)
    return not_applicable(fmt::format("its per-thread panel or partial sums would exceed {} bytes",
                                      kPanelBytesLimit));
  return Status::ok();
}

StagingSpec BwdwGemmSolver::staging(const Problem&) const {
  // Channels-first x and dy read in place when dense (fp32 staging otherwise), dW written as
  // [K][Cg] (in place for such a caller). bf16 stages nothing.
  StagingSpec spec{Order::channels_first, Order::channels_first, Padding{}, false};
  spec.stage = !bf16_;
  return spec;
}

void BwdwGemmSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  const std::int64_t parts = chunks(G, bf16_);
  // Partial sums per chunk (fp32 with one chunk writes dW directly).
  layout.add(parts > 1 || bf16_ ? parts * G.g * G.kg * G.cg : 0);
  const std::int64_t gathered = gathers_x(p) ? G.n * G.c() * G.out_spatial() : 0;
  layout.add(bf16_ ? (gathered + 1) / 2 : gathered);  // x' (bf16: two per float)
}

Status BwdwGemmSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const std::int64_t parts = chunks(G, bf16_), size = G.g * G.kg * G.cg;
  float* partial = parts > 1 || bf16_ ? layout.get(ws, first_scratch) : t.w;
  bwdw_gemm::Args a{};
  a.n = G.n, a.g = G.g, a.kg = G.kg, a.cg = G.cg, a.plane = G.out_spatial();
  a.x = bf16_ ? t.caller->x.data : t.x;
  if (gathers_x(p)) {
    float* copy = layout.get(ws, first_scratch + 1);
    if (bf16_)
      gather_x(G, static_cast<const std::uint16_t*>(a.x), reinterpret_cast<std::uint16_t*>(copy));
    else
      gather_x(G, t.x, copy);
    a.x = copy;
  }
  a.dy = bf16_ ? t.caller->y.data : t.y;
  a.chunk_words = chunk_words(G, bf16_);
  a.partial = partial;
  struct Panels;  // the kernel's per-thread panels
  a.panels = reusable_scratch<Panels, std::uint32_t>(
      static_cast<std::size_t>(omp_get_max_threads() * a.chunk_words * bwdw_gemm::kPanelColumns));
  if (bf16_)
    bwdw_gemm::run_bf16_avx512(a);
  else
    bwdw_gemm::run_avx512(a);
  if (parts > 1 || bf16_)
    add_partials_in_order(partial, parts, size, t.w,
                          bf16_ ? static_cast<std::uint16_t*>(t.caller->w.data) : nullptr);
  return Status::ok();
}

}  // namespace convguard::cpu
