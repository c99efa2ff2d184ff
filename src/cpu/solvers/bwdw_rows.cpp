#include "cpu/solvers/bwdw_rows.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu/isa.hpp"
#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bwdw_rows_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

std::int64_t output_rows(const Geometry& G) {
  return G.n * G.od * G.oh;
}
std::int64_t filter_columns(const Geometry& G) {
  return G.cg * G.taps();
}

// Output rows per chunk: about 8192 pixels each (a chunk's partial sums are one dW), but no more
// chunks than 64 MiB of partial sums hold. Fixed by the problem alone, so the sums (in chunk
// order) do not depend on the thread count.
std::int64_t rows_per_chunk(const Geometry& G) {
  const std::int64_t rows = output_rows(G), dw = G.g * G.kg * filter_columns(G);
  const std::int64_t most_chunks = std::max<std::int64_t>(1, (std::int64_t{16} << 20) / dw);
  const std::int64_t by_pixels = (8192 + G.ow - 1) / G.ow;
  return std::max(by_pixels, (rows + most_chunks - 1) / most_chunks);
}
std::int64_t chunks(const Geometry& G) {
  const std::int64_t per = rows_per_chunk(G);
  return (output_rows(G) + per - 1) / per;
}

// The padded, phase-split x at most (check() declines larger ones).
constexpr std::int64_t kPaddedXBytesLimit = std::int64_t{16} << 30;

// bf16's x is the caller's own unless it needs padding or a phase split.
bool copies_bf16_x(const Problem& p) {
  return forward_padding(p).any() || p.stride[2] > 1;
}

}  // namespace

std::string_view BwdwRowsSolver::id() const {
  return by_copy<std::string_view>(kernel_, "cpu:bwdw_rows:avx512", "cpu:bwdw_rows:avx2",
                                   "cpu:bwdw_rows:avx512_bf16");
}

Status BwdwRowsSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(isa_of(kernel_)); !s) return s;
  if (p.direction != Direction::backward_weights)
    return not_applicable(
        "backward-weights only (forward and backward-data: cpu:fwd_rows, cpu:bwdd_rows, "
        "cpu:nchw_gemm, cpu:implicit_gemm)");
  if (bf16())
    if (auto s = check_bf16_in_place(p, "cpu:bwdw_rows:avx512"); !s) return s;
  // The padded, phase-split x (the largest scratch), each factor bounded first so that the
  // product cannot overflow.
  const Geometry G = detail::geometry(p);
  const Sizes5 xs = padded(sizes5(x_desc(p)), forward_padding(p));
  if (bounded_product({4, xs.n, xs.c, G.sw, xs.d, xs.h, column_phase_width(xs, G.sw)},
                      kPaddedXBytesLimit) > kPaddedXBytesLimit)
    return not_applicable(
        fmt::format("its padded, phase-split copy of x would exceed {} bytes", kPaddedXBytesLimit));
  return Status::ok();
}

StagingSpec BwdwRowsSolver::staging(const Problem& p) const {
  // Channels-first everywhere: x zero-padded (masked loads never read past a row, so x may be
  // the caller's own when there is no padding), dy read in place when it is dense fp32, dW
  // written as [K][Cg][taps] (in place for such a caller). bf16 stages nothing: x_pad then only
  // sizes the padded copy compute() makes.
  StagingSpec spec{Order::channels_first, Order::channels_first, forward_padding(p), false};
  spec.stage = !bf16();
  return spec;
}

void BwdwRowsSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  const std::int64_t parts = chunks(G), dw = G.g * G.kg * filter_columns(G);
  // Partial sums per chunk (fp32 with one chunk writes dW directly).
  layout.add(parts > 1 || bf16() ? parts * dw : 0);
  layout.add(2 * filter_columns(G));  // tap offsets (int64)
  const Sizes5 xs = padded(sizes5(x_desc(p)), forward_padding(p));
  const std::int64_t phased = xs.n * xs.c * G.sw * xs.d * xs.h * column_phase_width(xs, G.sw);
  if (bf16())
    layout.add(copies_bf16_x(p) ? (phased + 1) / 2 : 0);
  else
    layout.add(G.sw > 1 ? phased : 0);
}

Status BwdwRowsSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const std::int64_t parts = chunks(G), columns = filter_columns(G);
  float* partial = parts > 1 || bf16() ? layout.get(ws, first_scratch) : t.w;
  auto* tap_at = reinterpret_cast<std::int64_t*>(layout.get(ws, first_scratch + 1));
  const void* x = bf16() ? t.caller->x.data : t.x;
  const std::int64_t q = G.sw > 1 ? column_phase_width(t.xs, G.sw) : t.xs.w;
  if (bf16() && copies_bf16_x(p)) {
    auto* copy = reinterpret_cast<std::uint16_t*>(layout.get(ws, first_scratch + 2));
    pad_column_phases(static_cast<const std::uint16_t*>(x), sizes5(t.caller->x.desc),
                      forward_padding(p), t.xs, G.sw, copy);
    x = copy;
  } else if (!bf16() && G.sw > 1) {
    float* copy = layout.get(ws, first_scratch + 2);
    pad_column_phases(t.x, t.xs, Padding{}, t.xs, G.sw, copy);
    x = copy;
  }
  // Column j = (c, kd, kh, kw): channel c's phase of kw's column, rows kd and kh down, kw's
  // whole phase columns along.
  const std::int64_t rows = t.xs.d * t.xs.h, channel = G.sw * rows * q;
  for (std::int64_t c = 0, j = 0; c < G.cg; ++c)
    for (std::int64_t kd = 0; kd < G.kd; ++kd)
      for (std::int64_t kh = 0; kh < G.kh; ++kh)
        for (std::int64_t kw = 0; kw < G.kw; ++kw, ++j) {
          const std::int64_t col = kw * G.dw;
          tap_at[j] = c * channel + (col % G.sw) * rows * q + (kd * G.dd * t.xs.h + kh * G.dh) * q +
                      col / G.sw;
        }
  bwdw_rows::Args a{};
  a.n = G.n, a.g = G.g, a.kg = G.kg, a.columns = columns;
  a.od = G.od, a.oh = G.oh, a.ow = G.ow;
  a.x_group = G.cg * channel;
  a.x_step_d = G.sd * t.xs.h * q, a.x_step_h = G.sh * q;
  a.tap_at = tap_at, a.x = x, a.dy = bf16() ? t.caller->y.data : t.y;
  a.rows_per_chunk = rows_per_chunk(G);
  a.partial = partial;
  struct LaneSums;  // the kernel's per-thread tile sums, aligned to 64 bytes here
  float* sums = reusable_scratch<LaneSums, float>(
      static_cast<std::size_t>(omp_get_max_threads() * bwdw_rows::kLaneSumFloats + 16));
  a.lane_sums = sums + (16 - reinterpret_cast<std::uintptr_t>(sums) / 4 % 16) % 16;
  by_copy(kernel_, &bwdw_rows::run_avx512, &bwdw_rows::run_avx2, &bwdw_rows::run_bf16_avx512)(a);
  if (parts > 1 || bf16())
    add_partials_in_order(partial, parts, G.g * G.kg * columns, t.w,
                          bf16() ? static_cast<std::uint16_t*>(t.caller->w.data) : nullptr);
  return Status::ok();
}

}  // namespace convguard::cpu
