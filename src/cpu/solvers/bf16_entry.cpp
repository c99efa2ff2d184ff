// The portable side of cpu:bf16_direct's AVX-512 kernels (bf16_kernels.hpp): the tables and
// per-thread buffers they read, made here so that no library template is compiled for AVX-512.
#include <omp.h>

#include <vector>

#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"

namespace convguard::cpu::bf16 {

namespace {

// Each output row (n, i, j) of the forward kernel stored through `at` into `out`.
struct Target {
  const Writer& out;
  const RowPlacement& at;
  static void store(const void* context, std::int64_t n, std::int64_t i, std::int64_t j,
                    const float* row) {
    const auto& [out, at] = *static_cast<const Target*>(context);
    out.row(n, at.first[0] + i * at.step[0], at.first[1] + j * at.step[1], row, at.first[2],
            at.step[2], at.count);
  }
};

// The AMX kernel's virtual row width and output rows per block: the pair that wastes the
// fewest tile rows on dropped pixels, while every thread gets 4 blocks and a thread's block
// buffer stays under 256 KiB (its rows are rounded and stored from L2 after the block: a whole
// 56 x 56 image of 64 channels, 800 KiB, went out to L3 first).
struct AmxBlocking {
  std::int64_t width = 0, rows = 1;
};
AmxBlocking amx_blocking(const detail::Geometry& G, const Sizes5& xs, std::int64_t threads) {
  std::vector<std::int64_t> widths{padded16(G.ow)};
  if (G.sh == 1 && G.sw == 1) widths.push_back(xs.w);  // runs across rows of the padded x
  const std::int64_t ldo = padded16(G.k());
  AmxBlocking best;
  double best_use = -1;
  for (const std::int64_t V : widths) {
    std::int64_t R = 1;
    while (R < G.oh && G.n * G.od * ((G.oh + R) / (R + 1)) >= 4 * threads &&
           padded16((R + 1) * V) * ldo * 4 <= (std::int64_t{256} << 10))
      ++R;
    const double use =
        static_cast<double>(R * G.ow) / static_cast<double>(padded16((R - 1) * V + G.ow));
    if (use > best_use) best_use = use, best = {V, R};
  }
  return best;
}

void forward_on_amx(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
                    const std::uint32_t* w, const Target& target) {
  const std::int64_t C2 = pairs(G.c());
  const FilterRows rows = filter_rows(G, Kernel::amx_bf16);
  std::vector<AmxSegment> segments;
  for (std::int64_t a = 0; a < G.kd; ++a)
    for (std::int64_t b = 0; b < G.kh; ++b)
      for (std::int64_t e = 0; e < G.kw; e += rows.taps_per_segment)
        segments.push_back({((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C2,
                            static_cast<std::int64_t>(segments.size()) * rows.segment_rows});
  const std::int64_t threads = omp_get_max_threads();
  const AmxBlocking blocking = amx_blocking(G, xs, threads);
  const std::int64_t rows_floats =
      padded16(blocking.rows * blocking.width) * padded16(G.k()) + G.ow * G.k();
  struct AmxRows;
  struct AmxStage;
  AmxForwardArgs f{};
  f.G = G;
  f.xs = xs;
  f.x = x;
  f.w = w;
  f.segments = segments.data();
  f.segment_count = static_cast<std::int64_t>(segments.size());
  f.segment_pairs = rows.taps_per_segment * C2;
  f.segment_rows = rows.segment_rows;
  f.width = blocking.width;
  f.rows_per_block = blocking.rows;
  f.rows = reusable_scratch<AmxRows, float>(static_cast<std::size_t>(threads * rows_floats));
  f.rows_floats = rows_floats;
  f.stage = reusable_scratch<AmxStage, std::uint32_t>(static_cast<std::size_t>(threads * 512));
  f.out = {&Target::store, &target};
  forward_amx(f);
}

}  // namespace

FilterRows filter_rows(const detail::Geometry& G, Kernel kernel) {
  if (kernel != Kernel::amx_bf16) return {};
  const std::int64_t per = G.dw == 1 ? G.kw : 1;
  return {per, padded16(per * pairs(G.c()))};
}

std::int64_t packed_filter_words(const detail::Geometry& G, Kernel kernel) {
  const FilterRows rows = filter_rows(G, kernel);
  const std::int64_t per_segment = rows.segment_rows ? rows.segment_rows : pairs(G.c());
  return blocks16(G.k()) * (G.taps() / rows.taps_per_segment) * per_segment * 16;
}

std::int64_t x_slack_words(std::int64_t sw, std::int64_t channels, Kernel kernel) {
  // A last tile's 15 dropped pixels, sw pixels apart, read at most a window's extent past the
  // last real pixel's (16 more words: a margin, not a need).
  return kernel == Kernel::amx_bf16 ? 16 * sw * pairs(channels) + 16 : 0;
}

void forward(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
             const std::uint32_t* w, const Writer& out, Kernel kernel, const RowPlacement& at) {
  const Target target{out, at};
  if (kernel == Kernel::amx_bf16) {
    forward_on_amx(G, xs, x, w, target);
    return;
  }
  const std::int64_t C2 = pairs(G.c());
  std::vector<std::int64_t> tap_offset;
  for (std::int64_t a = 0; a < G.kd; ++a)
    for (std::int64_t b = 0; b < G.kh; ++b)
      for (std::int64_t e = 0; e < G.kw; ++e)
        tap_offset.push_back(((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C2);
  // Rows per block: the fewest that make whole 6-pixel tiles, while every thread gets 4 blocks.
  const std::int64_t threads = omp_get_max_threads(), rows = G.n * G.od * G.oh;
  std::int64_t R = 1;
  while (R < 6 && R * G.ow % 6) ++R;
  if (rows / R < 4 * threads) R = 1;
  struct RowBuffers;  // per thread: R output rows of K channels, written before they are read
  float* buffers =
      reusable_scratch<RowBuffers, float>(static_cast<std::size_t>(threads * R * G.ow * G.k()));
  ForwardArgs f{G, xs, x, w, tap_offset.data(), R, buffers, {&Target::store, &target}};
  forward_avx512(f);
}

void backward_weights(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
                      const std::uint32_t* dy, float* dwt) {
  const std::int64_t C = G.c();
  std::vector<std::int64_t> col, row_x;
  for (std::int64_t a = 0; a < G.kd; ++a)
    for (std::int64_t b = 0; b < G.kh; ++b)
      for (std::int64_t e = 0; e < G.kw; ++e)
        for (std::int64_t c = 0; c < C; ++c)
          col.push_back(((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C + c);
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh)
        row_x.push_back(((n * xs.d + od * G.sd) * xs.h + oh * G.sh) * xs.w * C);
  backward_weights_avx512({G, xs, x, dy, col.data(), row_x.data(), dwt});
}

}  // namespace convguard::cpu::bf16
