#include "cpu/solvers/rows_conv.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

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
  std::int64_t stride[3];  // the window's: forward's, 1 in backward-data
  std::int64_t top[3];     // input pixel (d, h, w) is the padded input's (d + top[0], ...)
  // The window's reach past an item's last output row and column along each axis: the dilated
  // filter's extent - 1, or strided backward-data's offset span (PhasePlan); its planes per input
  // channel (k[0], dil[0] apart, or the span + 1, one apart) and the output pixels a window row
  // serves (out[2], or the first phase's).
  std::int64_t reach[3], window_kd, window_out_w;
  bool flip;    // backward-data: taps flipped, filter channel roles swapped
  bool phased;  // strided backward-data (rows_conv_entry.hpp: Phase)
  bool bf16;    // window and filter words hold channel pairs
  std::int64_t taps() const { return k[0] * k[1] * k[2]; }
  // A column phase of a window row (rows_conv::Args): the output row and the taps' reach in it.
  std::int64_t phase_w() const { return window_out_w + reach[2] / stride[2]; }
  std::int64_t padded_w() const { return stride[2] * phase_w(); }
  // Rows of a window plane: the input rows an item's output rows read (stride apart) and the
  // reach below the last.
  std::int64_t window_rows() const {
    return (rows_conv::kRowsPerItem - 1) * stride[1] + reach[1] + 1;
  }
  // Window planes: input channels (fp32), or pairs of them (bf16: one 32-bit word per pixel).
  std::int64_t planes() const { return bf16 ? (in_c + 1) / 2 : in_c; }
  std::int64_t window_floats() const { return planes() * window_kd * window_rows() * padded_w(); }
  std::int64_t blocks() const { return (out_c + kBlockChannels - 1) / kBlockChannels; }
  std::int64_t depth() const { return planes() * taps(); }  // reduction rows
};

// A thread's window at most (check() declines larger ones), and its phase outputs.
constexpr std::int64_t kWindowBytesLimit = 16 << 20;
// Forward on the AVX2 copy stores plainly where its reduction is shorter than this, even where
// streams_output() would stream: measured a gain on an AMD Zen 3 for the C = 3 first layers (27
// and 75 rows), none for conv1 (147); docs/perf.md, "session 33 (CPU)". Backward-data keeps
// streaming: seed003's 1 GiB dx over 25 rows ran plainly 10% faster, then up to 53% slower
// minutes later ("session 34 (CPU)"; a busier memory the likely cause). So does the AVX-512 copy
// (streaming measured a gain there, docs/perf.md "Non-temporal stores", and call by call on an
// Emerald Rapids in session 34).
constexpr std::int64_t kAvx2StreamFromDepth = 128;
// Strided backward-data's phases at most (sd x sh x sw): each thread holds every phase's outputs
// for an item, and every phase runs its own tiles per item (tested up to 4 x 4 x 4).
constexpr std::int64_t kMaxPhases = 64;

// The filter as [g][output channel block][input channel (pair)][reduction tap][6] words, zero
// past the channels: fp32 values, or bf16 pairs of input channels (2 i2, 2 i2 + 1), the first in
// the low half. Reduction tap t is w's tap `taps[t]` (forward: t itself; backward-data: flipped,
// or a stride phase's taps). w is [K][Cg][taps]; backward-data reads it with its input channel
// being w's K. Run in every call, so each output channel's words are walked with fixed strides
// and no per-element test: the generic loop (every index and bound per element) took 18% of a
// 512 -> 512 3x3 7x7 bf16 layer's time (perf record).
template <class T, class Word>
void pack_filter(const RowsView& v, const T* w, std::span<const std::int64_t> taps, Word* to) {
  constexpr int per_word = sizeof(Word) / sizeof(T);
  const std::int64_t blocks = v.blocks(), all_taps = v.taps();
  const auto count = static_cast<std::int64_t>(taps.size());
  const std::int64_t kg = v.flip ? v.in_c : v.out_c, cg = v.flip ? v.out_c : v.in_c;
  // Element (input channel i, tap t) of output channel o is at first(o) + i * along_i + t.
  const std::int64_t along_i = v.flip ? cg * all_taps : all_taps;
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < v.g; ++grp)
    for (std::int64_t b = 0; b < blocks; ++b) {
      // The block's output channels, those past out_c read as zero (from `zero`, never advanced
      // past its first element: their steps are 0).
      const T zero[1] = {};
      const T* first[kBlockChannels];
      std::int64_t step_i[kBlockChannels], live_taps[kBlockChannels];
      for (int m = 0; m < kBlockChannels; ++m) {
        const std::int64_t o = b * kBlockChannels + m;
        const bool live = o < v.out_c;
        first[m] = !live    ? zero
                   : v.flip ? w + (grp * kg * cg + o) * all_taps
                            : w + (grp * kg + o) * cg * all_taps;
        step_i[m] = live ? along_i : 0, live_taps[m] = live ? 1 : 0;
      }
      Word* out = to + (grp * blocks + b) * v.planes() * count * kBlockChannels;
      for (std::int64_t i2 = 0; i2 < v.planes(); ++i2) {
        const int halves =
            static_cast<int>(std::min<std::int64_t>(per_word, v.in_c - i2 * per_word));
        for (std::int64_t t = 0; t < count; ++t, out += kBlockChannels)
          for (int m = 0; m < kBlockChannels; ++m) {
            const T* from = first[m] + i2 * per_word * step_i[m] + taps[t] * live_taps[m];
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

// Strided backward-data's phases (rows_conv_entry.hpp: Phase) along one axis of stride s, padding
// pad, dilation dil and k taps. Tap kt reaches one residue, the q in [0, s) with q + pad - kt dil
// a multiple of s, at the dy offset off(kt) = (q + pad - kt dil) / s = ceil((pad - kt dil) / s),
// which falls as kt grows: the offsets run from off(k - 1) (lowest) to off(0) (highest). O(1), so
// that check() costs nothing whatever the filter (the per-residue tap lists, O(k), are built in
// compute(), taps_by_residue).
struct AxisPhases {
  std::int64_t stride = 1, pad = 0, dil = 1, k = 1;
  std::int64_t offset(std::int64_t kt) const {
    const std::int64_t a = pad - kt * dil;
    return a >= 0 ? (a + stride - 1) / stride : -(-a / stride);
  }
  std::int64_t residue(std::int64_t kt) const { return offset(kt) * stride - (pad - kt * dil); }
  std::int64_t lowest() const { return offset(k - 1); }
  std::int64_t highest() const { return offset(0); }
  // Phase q's pixels along a dx extent n: q, q + stride, ... below n.
  std::int64_t pixels(std::int64_t q, std::int64_t n) const {
    return q < n ? (n - q + stride - 1) / stride : 0;
  }
};
// Per residue, the taps that reach it in ascending offset (falling kt: the window read in order).
std::vector<std::vector<std::int64_t>> taps_by_residue(const AxisPhases& a) {
  std::vector<std::vector<std::int64_t>> taps(static_cast<std::size_t>(a.stride));
  for (std::int64_t kt = a.k - 1; kt >= 0; --kt)
    taps[static_cast<std::size_t>(a.residue(kt))].push_back(kt);
  return taps;
}

// Strided backward-data's window: the view's window with stride 1 (one dy row and plane apart),
// from each axis's lowest offset (top), as many rows and planes as the offsets span.
struct PhasePlan {
  AxisPhases axes[3];
  std::int64_t span(int d) const { return axes[d].highest() - axes[d].lowest(); }
};
PhasePlan phase_plan(const Problem& p) {
  PhasePlan plan;
  for (int d = 0; d < 3; ++d)
    plan.axes[d] = {p.stride[d], p.pad_begin[d], p.dilation[d], p.filter[d]};
  return plan;
}

bool strided_backward_data(const Problem& p) {
  return p.direction == Direction::backward_data && p.stride != Dims3{1, 1, 1};
}

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
    v.reach[d] = (k[d] - 1) * dil[d];
  }
  v.window_kd = v.k[0], v.window_out_w = v.out[2];
  v.flip = !fwd;
  v.phased = strided_backward_data(p);
  v.bf16 = bf16;
  if (v.phased) {  // the window one dy row and plane apart, from the lowest offset (PhasePlan)
    const PhasePlan plan = phase_plan(p);
    for (int d = 0; d < 3; ++d) v.top[d] = -plan.axes[d].lowest(), v.reach[d] = plan.span(d);
    v.window_kd = plan.span(0) + 1, v.window_out_w = plan.axes[2].pixels(0, v.out[2]);
  }
  return v;
}

// Strided backward-data's phases in residue order (qd, qh, qw): each one's w taps and window
// offsets in reduction order, its filter words packed (pack) and its tap offsets written one
// phase after another from w and tap_at.
template <class Pack>
std::vector<rows_conv::Phase> plan_phases(const RowsView& v, const PhasePlan& plan,
                                          std::int64_t* tap_at, float* w, const Pack& pack) {
  const AxisPhases(&ax)[3] = plan.axes;
  const std::vector<std::vector<std::int64_t>> by_residue[3] = {
      taps_by_residue(ax[0]), taps_by_residue(ax[1]), taps_by_residue(ax[2])};
  const std::int64_t rows = v.window_rows(), pitch = v.padded_w();
  std::vector<rows_conv::Phase> phases;
  for (std::int64_t qd = 0; qd < ax[0].stride; ++qd)
    for (std::int64_t qh = 0; qh < ax[1].stride; ++qh)
      for (std::int64_t qw = 0; qw < ax[2].stride; ++qw) {
        rows_conv::Phase ph{};
        ph.od = ax[0].pixels(qd, v.out[0]), ph.oh = ax[1].pixels(qh, v.out[1]);
        ph.ow = ax[2].pixels(qw, v.out[2]);
        std::vector<std::int64_t> taps, at;  // w's taps and their window offsets
        for (const std::int64_t td : by_residue[0][static_cast<std::size_t>(qd)])
          for (const std::int64_t th : by_residue[1][static_cast<std::size_t>(qh)])
            for (const std::int64_t tw : by_residue[2][static_cast<std::size_t>(qw)]) {
              taps.push_back((td * v.k[1] + th) * v.k[2] + tw);
              at.push_back(
                  ((ax[0].offset(td) - ax[0].lowest()) * rows + ax[1].offset(th) - ax[1].lowest()) *
                      pitch +
                  ax[2].offset(tw) - ax[2].lowest());
            }
        const auto count = static_cast<std::int64_t>(taps.size());
        ph.depth = v.planes() * count;
        for (std::int64_t i2 = 0; i2 < v.planes(); ++i2)
          for (std::int64_t j = 0; j < count; ++j)
            tap_at[i2 * count + j] =
                i2 * v.window_kd * rows * pitch + at[static_cast<std::size_t>(j)];
        ph.tap_at = tap_at;
        tap_at += ph.depth;
        if (count > 0) pack(taps, w);
        ph.w = w;
        w += v.g * v.blocks() * ph.depth * kBlockChannels;
        phases.push_back(ph);
      }
  return phases;
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
  // Strided backward-data: a phase per stride residue, each with its outputs in every thread's
  // words (rows_conv_entry.hpp: Phase).
  if (strided_backward_data(p))
    if (bounded_product({p.stride[0], p.stride[1], p.stride[2]}, kMaxPhases) > kMaxPhases)
      return not_applicable(fmt::format(
          "backward-data at strides {}x{}x{}: more than {} stride phases (cpu:nchw_gemm, "
          "cpu:implicit_gemm)",
          p.stride[0], p.stride[1], p.stride[2], kMaxPhases));
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
  const std::int64_t window = bounded_product(
      {4, v.planes(), v.window_kd, v.window_rows(), v.padded_w()}, kWindowBytesLimit);
  if (window > kWindowBytesLimit)
    return not_applicable(fmt::format(
        "its per-thread window of input rows ({} planes x {} x {} rows x {} columns) would exceed "
        "{} bytes",
        v.planes(), v.window_kd, v.window_rows(), v.padded_w(), kWindowBytesLimit));
  if (v.phased)
    if (const std::int64_t outputs =
            bounded_product({4, p.stride[0] * p.stride[1] * p.stride[2], kBlockChannels,
                             rows_conv::kRowsPerItem, v.window_out_w},
                            kWindowBytesLimit);
        outputs > kWindowBytesLimit)
      return not_applicable(fmt::format(
          "its per-thread phase outputs ({} phases of {} pixels a row) would exceed {} bytes",
          p.stride[0] * p.stride[1] * p.stride[2], v.window_out_w, kWindowBytesLimit));
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
  const auto pack = [&](std::span<const std::int64_t> taps, float* to) {
    if (bf16())
      pack_filter(v, static_cast<const std::uint16_t*>(t.caller->w.data), taps,
                  reinterpret_cast<std::uint32_t*>(to));
    else
      pack_filter(v, t.w, taps, to);
  };
  const std::int64_t rows = v.window_rows(), sw = v.stride[2];
  std::vector<rows_conv::Phase> phases;
  if (v.phased) {
    phases = plan_phases(v, phase_plan(p), tap_at, w, pack);
  } else {
    // Reduction row j = (input channel (pair) i2, tap kd, kh, kw): in an item's window, plane
    // (i2, kd), kh dilated rows down, kw dilated columns along (in its column phase); w's tap j
    // forward, flipped in backward-data.
    std::vector<std::int64_t> taps(static_cast<std::size_t>(v.taps()));
    for (std::int64_t j = 0; j < v.taps(); ++j)
      taps[static_cast<std::size_t>(j)] = v.flip ? v.taps() - 1 - j : j;
    pack(taps, w);
    for (std::int64_t i2 = 0, j = 0; i2 < v.planes(); ++i2)
      for (std::int64_t kd = 0; kd < v.k[0]; ++kd)
        for (std::int64_t kh = 0; kh < v.k[1]; ++kh)
          for (std::int64_t kw = 0; kw < v.k[2]; ++kw, ++j)
            tap_at[j] = ((i2 * v.k[0] + kd) * rows + kh * v.dil[1]) * v.padded_w() +
                        kw * v.dil[2] % sw * v.phase_w() + kw * v.dil[2] / sw;
  }
  rows_conv::Args a{};
  a.n = v.n, a.g = v.g, a.cg = v.out_c, a.kg = v.in_c, a.depth = v.depth();
  a.id = v.out[0], a.ih = v.out[1], a.iw = v.out[2];
  a.od = v.in[0], a.oh = v.in[1], a.ow = v.in[2];
  a.kd = v.window_kd, a.dd = v.phased ? 1 : v.dil[0];
  for (int d = 0; d < 3; ++d) a.top[d] = v.top[d];
  a.window_rows = rows, a.padded_w = v.padded_w();
  a.sd = v.stride[0], a.sh = v.stride[1], a.sw = sw;
  a.window_planes = v.planes();
  a.stream_out =
      streams_output(v.n * v.g * v.out_c * v.out[0] * v.out[1] * v.out[2] * (bf16() ? 2 : 4)) &&
      !(kernel_ == KernelCopy::f32_avx2 && fwd && v.depth() < kAvx2StreamFromDepth);
  a.tap_at = tap_at, a.w = w;
  if (v.phased) {
    a.phases = phases.data(), a.phase_count = static_cast<int>(phases.size());
    for (int d = 0; d < 3; ++d) a.dx_stride[d] = p.stride[d];
  }
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
