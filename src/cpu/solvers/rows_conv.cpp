#include "cpu/solvers/rows_conv.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu/isa.hpp"
#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/rows_conv_entry.hpp"

namespace convguard::cpu {
namespace {

using rows_conv::kBlockChannels;

// The computation in the kernel's terms: output channels per group (the tile's rows), input
// channels per group (windowed), their sizes, and where the input sits in its zero-padded form.
struct RowsView {
  std::int64_t n, g, out_c, in_c;
  std::int64_t out[3], in[3];  // d, h, w
  std::int64_t k[3], dil[3];
  std::int64_t stride[3];  // forward's (backward-data: 1)
  std::int64_t top[3];     // input pixel (d, h, w) is the padded input's (d + top[0], ...)
  bool flip;               // backward-data: taps flipped, filter channel roles swapped
  bool bf16;               // window and filter words hold channel pairs
  std::int64_t taps() const { return k[0] * k[1] * k[2]; }
  // A column phase of a window row (rows_conv::Args): the output row and the taps' reach in it.
  std::int64_t phase_w() const { return out[2] + (k[2] - 1) * dil[2] / stride[2]; }
  std::int64_t padded_w() const { return stride[2] * phase_w(); }
  // Rows of a window plane: the input rows an item's output rows read (stride apart) and the
  // dilated filter height below the last.
  std::int64_t window_rows() const {
    return (rows_conv::kRowsPerItem - 1) * stride[1] + (k[1] - 1) * dil[1] + 1;
  }
  // Window planes: input channels (fp32), or pairs of them (bf16: one 32-bit word per pixel).
  std::int64_t planes() const { return bf16 ? (in_c + 1) / 2 : in_c; }
  std::int64_t window_floats() const { return planes() * k[0] * window_rows() * padded_w(); }
  std::int64_t blocks() const { return (out_c + kBlockChannels - 1) / kBlockChannels; }
  std::int64_t depth() const { return planes() * taps(); }  // reduction rows
};

RowsView view_of(const Problem& p, bool bf16) {
  const detail::Geometry G = detail::geometry(p);
  const bool fwd = p.direction == Direction::forward;
  RowsView v{};
  v.n = G.n, v.g = G.g;
  v.out_c = fwd ? G.kg : G.cg, v.in_c = fwd ? G.cg : G.kg;
  const std::int64_t o[3] = {G.od, G.oh, G.ow}, i[3] = {G.id, G.ih, G.iw};
  const std::int64_t k[3] = {G.kd, G.kh, G.kw}, dil[3] = {G.dd, G.dh, G.dw};
  const std::int64_t stride[3] = {G.sd, G.sh, G.sw};
  const std::int64_t pad[3] = {G.pd, G.ph, G.pw};
  for (int d = 0; d < 3; ++d) {
    v.out[d] = fwd ? o[d] : i[d];
    v.in[d] = fwd ? i[d] : o[d];
    v.k[d] = k[d], v.dil[d] = dil[d];
    v.stride[d] = fwd ? stride[d] : 1;
    v.top[d] = fwd ? pad[d] : (k[d] - 1) * dil[d] - pad[d];
  }
  v.flip = !fwd;
  v.bf16 = bf16;
  return v;
}

// A thread's window at most (check() declines larger ones).
constexpr std::int64_t kWindowBytesLimit = 16 << 20;

// The filter as [g][output channel block][input channel (pair)][tap][6] words, zero past the
// channels: fp32 values, or bf16 pairs of input channels (2 i2, 2 i2 + 1), the first in the low
// half. w is [K][Cg][taps]; backward-data reads it flipped, its input channel being w's K. Run in
// every call, so each output channel's words are walked with fixed strides and no per-element
// test: the generic loop (every index and bound per element) took 18% of a 512 -> 512 3x3 7x7
// bf16 layer's time (perf record).
template <class T, class Word>
void pack_filter(const RowsView& v, const T* w, Word* to) {
  constexpr int per_word = sizeof(Word) / sizeof(T);
  const std::int64_t blocks = v.blocks(), taps = v.taps(), depth = v.depth();
  const std::int64_t kg = v.flip ? v.in_c : v.out_c, cg = v.flip ? v.out_c : v.in_c;
  // Element (input channel i, tap t) of output channel o is at first(o) + i * along_i + t *
  // along_t.
  const std::int64_t along_i = v.flip ? cg * taps : taps, along_t = v.flip ? -1 : 1;
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < v.g; ++grp)
    for (std::int64_t b = 0; b < blocks; ++b) {
      // The block's output channels, those past out_c read as zero (from `zero`, never advanced
      // past its first element: along_i and along_t are 0 for it).
      const T zero[1] = {};
      const T* first[kBlockChannels];
      std::int64_t step_i[kBlockChannels], step_t[kBlockChannels];
      for (int m = 0; m < kBlockChannels; ++m) {
        const std::int64_t o = b * kBlockChannels + m;
        const bool live = o < v.out_c;
        first[m] = !live    ? zero
                   : v.flip ? w + (grp * kg * cg + o) * taps + taps - 1
                            : w + (grp * kg + o) * cg * taps;
        step_i[m] = live ? along_i : 0, step_t[m] = live ? along_t : 0;
      }
      Word* out = to + (grp * blocks + b) * depth * kBlockChannels;
      for (std::int64_t i2 = 0; i2 < v.planes(); ++i2) {
        const int halves =
            static_cast<int>(std::min<std::int64_t>(per_word, v.in_c - i2 * per_word));
        for (std::int64_t t = 0; t < taps; ++t, out += kBlockChannels)
          for (int m = 0; m < kBlockChannels; ++m) {
            const T* from = first[m] + i2 * per_word * step_i[m] + t * step_t[m];
            // Built in registers: two 16-bit stores read back as one word stall the load.
            if constexpr (per_word == 1) {
              out[m] = from[0];
            } else {
              const Word hi = halves > 1 ? Word{from[step_i[m]]} : Word{};
              out[m] = Word{from[0]} | hi << 16;
            }
          }
      }
    }
}

}  // namespace

std::string_view RowsConvSolver::id() const {
  if (direction_ == Direction::forward)
    return by_copy<std::string_view>(kernel_, "cpu:fwd_rows:avx512", "cpu:fwd_rows:avx2",
                                     "cpu:fwd_rows:avx512_bf16");
  return by_copy<std::string_view>(kernel_, "cpu:bwdd_rows:avx512", "cpu:bwdd_rows:avx2",
                                   "cpu:bwdd_rows:avx512_bf16");
}

Status RowsConvSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(isa_of(kernel_)); !s) return s;
  if (p.direction != direction_)
    return not_applicable(
        direction_ == Direction::forward
            ? "forward only (backward-data: cpu:bwdd_rows)"
            : "backward-data only (forward: cpu:fwd_rows; weights: cpu:bwdw_rows)");
  if (direction_ == Direction::backward_data && p.stride != Dims3{1, 1, 1})
    return not_applicable(
        "backward-data at stride 1 only (strided: cpu:nchw_gemm, cpu:bf16_direct, "
        "cpu:implicit_gemm)");
  // A stride beyond the dilated filter's extent leaves window rows and column phases no tap reads,
  // copied for nothing: ResNet-50's 1x1 stride-2 layers ran 1.4-1.7x slower than the GEMMs
  // (AMD EPYC Zen 1, 2 threads; docs/perf.md, session 21).
  for (int d = 0; d < 3; ++d)
    if (const std::int64_t extent = (p.filter[d] - 1) * p.dilation[d] + 1; p.stride[d] > extent)
      return not_applicable(fmt::format(
          "a stride of {} beyond the dilated filter's extent {} along dimension {} (input the "
          "windows would copy for no tap: cpu:nchw_gemm, cpu:im2col_gemm)",
          p.stride[d], extent, d));
  if (direction_ == Direction::backward_data)
    for (int d = 0; d < 3; ++d)
      if (p.pad_begin[d] > (p.filter[d] - 1) * p.dilation[d])
        return not_applicable(fmt::format(
            "a padding of {} beyond (filter - 1) x dilation = {} along dimension {} (dy rows no dx "
            "pixel reads)",
            p.pad_begin[d], (p.filter[d] - 1) * p.dilation[d], d));
  if (bf16())
    if (auto s = check_bf16_in_place(
            p, direction_ == Direction::forward ? "cpu:fwd_rows:avx512" : "cpu:bwdd_rows:avx512");
        !s)
      return s;
  // The window's size, each factor bounded first so that the product cannot overflow.
  const RowsView v = view_of(p, bf16());
  const std::int64_t window =
      bounded_product({4, v.planes(), v.k[0], v.window_rows(), v.padded_w()}, kWindowBytesLimit);
  if (window > kWindowBytesLimit)
    return not_applicable(fmt::format(
        "its per-thread window of input rows ({} planes x {} x {} rows x {} columns) would exceed "
        "{} bytes",
        v.planes(), v.k[0], v.window_rows(), v.padded_w(), kWindowBytesLimit));
  return Status::ok();
}

StagingSpec RowsConvSolver::staging(const Problem&) const {
  // Channels-first, nothing padded (the windows pad): the input read as it comes when dense fp32,
  // the output written whole, the filter as [K][Cg][taps]. bf16 stages nothing: it reads and
  // writes the caller's tensors.
  StagingSpec spec{Order::channels_first, Order::channels_first, Padding{}, false};
  spec.stage = !bf16();
  return spec;
}

void RowsConvSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const RowsView v = view_of(p, bf16());
  layout.add(v.g * v.blocks() * v.depth() * kBlockChannels);  // filter words
  layout.add(2 * v.depth());                                  // tap offsets (int64)
}

Status RowsConvSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const {
  const RowsView v = view_of(p, bf16());
  const bool fwd = direction_ == Direction::forward;
  float* w = layout.get(ws, first_scratch);
  auto* tap_at = reinterpret_cast<std::int64_t*>(layout.get(ws, first_scratch + 1));
  if (bf16())
    pack_filter(v, static_cast<const std::uint16_t*>(t.caller->w.data),
                reinterpret_cast<std::uint32_t*>(w));
  else
    pack_filter(v, t.w, w);
  // Reduction row j = (input channel (pair) i2, tap kd, kh, kw): in an item's window, plane
  // (i2, kd), kh dilated rows down, kw dilated columns along (in its column phase).
  const std::int64_t rows = v.window_rows(), sw = v.stride[2];
  for (std::int64_t i2 = 0, j = 0; i2 < v.planes(); ++i2)
    for (std::int64_t kd = 0; kd < v.k[0]; ++kd)
      for (std::int64_t kh = 0; kh < v.k[1]; ++kh)
        for (std::int64_t kw = 0; kw < v.k[2]; ++kw, ++j)
          tap_at[j] = ((i2 * v.k[0] + kd) * rows + kh * v.dil[1]) * v.padded_w() +
                      kw * v.dil[2] % sw * v.phase_w() + kw * v.dil[2] / sw;
  rows_conv::Args a{};
  a.n = v.n, a.g = v.g, a.cg = v.out_c, a.kg = v.in_c, a.depth = v.depth();
  a.id = v.out[0], a.ih = v.out[1], a.iw = v.out[2];
  a.od = v.in[0], a.oh = v.in[1], a.ow = v.in[2];
  a.kd = v.k[0], a.dd = v.dil[0];
  for (int d = 0; d < 3; ++d) a.top[d] = v.top[d];
  a.window_rows = rows, a.padded_w = v.padded_w();
  a.sd = v.stride[0], a.sh = v.stride[1], a.sw = sw;
  a.window_planes = v.planes();
  a.stream_out =
      streams_output(v.n * v.g * v.out_c * v.out[0] * v.out[1] * v.out[2] * (bf16() ? 2 : 4));
  a.tap_at = tap_at, a.w = w;
  const TensorView& in = fwd ? t.caller->x : t.caller->y;
  const TensorView& out = fwd ? t.caller->y : t.caller->x;
  a.dy = bf16() ? in.data : fwd ? t.x : t.y;
  a.dx = bf16() ? out.data : fwd ? t.y : t.x;
  struct Windows;  // per-thread windows of padded input rows
  a.windows = reusable_scratch<Windows, float>(
      static_cast<std::size_t>(omp_get_max_threads() * a.thread_words()));
  by_copy(kernel_, &rows_conv::run_avx512, &rows_conv::run_avx2, &rows_conv::run_bf16_avx512)(a);
  return Status::ok();
}

}  // namespace convguard::cpu
