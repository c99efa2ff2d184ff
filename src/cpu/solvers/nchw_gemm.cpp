#include "cpu/solvers/nchw_gemm.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/nchw_gemm_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

struct TileShape {
  int rows, cols;
};
TileShape tile_shape(NchwGemmKernel k) {
  return k == NchwGemmKernel::f32_avx2 ? TileShape{nchw_gemm::kRowsAvx2, nchw_gemm::kColsAvx2}
                                       : TileShape{nchw_gemm::kRowsAvx512, nchw_gemm::kColsAvx512};
}

// GEMM rows and reduction length per group: output channels and input channels x taps forward;
// input and output channels backward-data (1x1 only).
std::int64_t gemm_rows(const Geometry& G, bool fwd) {
  return fwd ? G.kg : G.cg;
}
std::int64_t gemm_depth(const Geometry& G, bool fwd) {
  return fwd ? G.cg * G.taps() : G.kg;
}
bool one_by_one(const Problem& p) {
  return p.filter == Dims3{1, 1, 1};
}

// What the kernel reads and writes: fp32 (the caller's, or bf16 staged to fp32), bf16 pairs
// multiplied by vdpbf16ps (the avx512_bf16 variant), or the caller's bf16 widened to fp32 as it
// is packed and rounded back as it is stored (the avx512 variant on bf16 problems whose tensors
// it can read in place, on AVX-512 CPUs with BW and VL: the only bf16 path without AVX512_BF16).
// Asked several times per call: an fp32 problem returns before building any message.
enum class Elements { f32, bf16_pairs, bf16_widened };
Elements elements(const Problem& p, NchwGemmKernel k) {
  if (k == NchwGemmKernel::bf16_avx512) return Elements::bf16_pairs;
  if (p.dtype != DType::bf16) return Elements::f32;
  if (k == NchwGemmKernel::f32_avx512 && p.direction != Direction::backward_weights &&
      check_bf16_layout_in_place(p, "") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return Elements::bf16_widened;
  return Elements::f32;
}
bool is_bf16(Elements e) {
  return e != Elements::f32;
}

// 32-bit words per reduction row pair (bf16 pairs) or row (fp32, widened bf16).
std::int64_t gemm_words(const Geometry& G, bool fwd, Elements e) {
  return e == Elements::bf16_pairs ? (gemm_depth(G, fwd) + 1) / 2 : gemm_depth(G, fwd);
}

// Forward reads the filter where it lies ([K][Cg x taps], Args::a_row_words) but for a bf16
// reduction of odd length, whose last word would take the next row's first element as its
// second half (zero in the panel, but 0 x inf is NaN). Packing a 2048 -> 512 1x1 filter was a
// tenth of that 7x7 layer's time, even written without per-element tests. Widened bf16 is
// always packed: the tile broadcasts fp32 words.
bool filter_in_place(const Geometry& G, bool fwd, Elements e) {
  return fwd && (e == Elements::f32 || (e == Elements::bf16_pairs && gemm_depth(G, fwd) % 2 == 0));
}

std::int64_t packed_filter_words(const Problem& p, NchwGemmKernel k, Elements e) {
  const Geometry G = detail::geometry(p);
  const bool fwd = p.direction == Direction::forward;
  if (filter_in_place(G, fwd, e)) return 0;
  const int rows = tile_shape(k).rows;
  return G.g * ((gemm_rows(G, fwd) + rows - 1) / rows) * rows * gemm_words(G, fwd, e);
}

// w [K][Cg] (fp32 or bf16 bits T) as [g][row block][word][rows] 32-bit words, zero past the last
// row: fp32 values (bf16 widened when Word is float), or bf16 pairs of reduction rows (2 d2,
// 2 d2 + 1), the first in the low half (Word std::uint32_t).
// Run in every call (the weights change between training steps), so it must cost little beside
// the GEMM: element (row, d) is w[row * rs + d * ds] in its group, read with no per-element
// bounds test (the zero rows and the odd depth's last half are handled apart). A per-element
// lambda with both tests took a quarter of a 2048->512 7x7 bf16 layer's time.
template <class T, class Word>
void pack_filter(const Geometry& G, bool fwd, int rows, const T* w, Word* out) {
  constexpr bool widen = sizeof(T) == 2 && std::is_same_v<Word, float>;
  constexpr int per_word = widen ? 1 : sizeof(Word) / sizeof(T);
  const std::int64_t m = gemm_rows(G, fwd), depth = gemm_depth(G, fwd);
  const std::int64_t blocks = (m + rows - 1) / rows, words = (depth + per_word - 1) / per_word;
  const std::int64_t rs = fwd ? depth : 1, ds = fwd ? 1 : G.cg, in_group = m * depth;
  const std::int64_t whole = depth / per_word;  // words with every half inside the reduction
#pragma omp parallel for collapse(2)
  for (std::int64_t grp = 0; grp < G.g; ++grp)
    for (std::int64_t b = 0; b < blocks; ++b) {
      Word* o = out + (grp * blocks + b) * words * rows;
      const T* first = w + grp * in_group + b * rows * rs;
      const int live = static_cast<int>(std::min<std::int64_t>(rows, m - b * rows));
      // Built in registers: two 16-bit stores read back as one word stall the load
      // (rows_conv.cpp's pack measured it).
      const auto word_at = [&](int r, std::int64_t d, int halves) {
        const T* at = first + r * rs + d * per_word * ds;
        if constexpr (widen) {
          return std::bit_cast<float>(std::uint32_t{at[0]} << 16);
        } else if constexpr (per_word == 1) {
          return Word{at[0]};
        } else {
          const Word hi = halves > 1 ? Word{at[ds]} : Word{};
          return static_cast<Word>(Word{at[0]} | hi << 16);
        }
      };
      for (std::int64_t d = 0; d < whole; ++d) {
        for (int r = 0; r < live; ++r) o[d * rows + r] = word_at(r, d, per_word);
        for (int r = live; r < rows; ++r) o[d * rows + r] = Word{};
      }
      if (whole < words) {
        const int halves = static_cast<int>(depth - whole * per_word);
        for (int r = 0; r < live; ++r) o[whole * rows + r] = word_at(r, whole, halves);
        for (int r = live; r < rows; ++r) o[whole * rows + r] = Word{};
      }
    }
}

// Where the kernel's columns and reduction rows are (nchw_gemm_entry.hpp: Args).
struct ColumnTables {
  std::vector<std::int64_t> gather, scatter, depth_at;
  std::int64_t in_group = 0;
  // > 0: depth_at[d] = d * depth_stride (1x1: rows a plane apart), so the kernel may read a dense
  // panel in place (nchw_gemm_entry.hpp: Args::depth_stride); 0 beyond 1x1.
  std::int64_t depth_stride = 0;
  bool covers_dx = true;  // backward-data: every dx pixel is some column's (else zero the rest)
};

// Beyond 1x1 (forward only): x zero-padded to xs, each column's first element its window's first
// tap, each reduction row (channel, tap) one offset from it. 1x1: each output pixel's input pixel
// (-1 in the padding: a zero column forward, not stored backward-data), rows channel planes apart.
ColumnTables column_tables(const Geometry& G, bool fwd, bool one_by_one, const Sizes5& xs) {
  ColumnTables t;
  const std::int64_t depth = gemm_depth(G, fwd);
  t.depth_at.reserve(static_cast<std::size_t>(depth));
  std::vector<std::int64_t> pixels, identity;
  pixels.reserve(static_cast<std::size_t>(G.out_spatial()));
  if (!one_by_one) {
    const std::int64_t plane = xs.d * xs.h * xs.w;
    for (std::int64_t c = 0; c < G.cg; ++c)
      for (std::int64_t i = 0; i < G.kd; ++i)
        for (std::int64_t j = 0; j < G.kh; ++j)
          for (std::int64_t k = 0; k < G.kw; ++k)
            t.depth_at.push_back(c * plane + (i * G.dd * xs.h + j * G.dh) * xs.w + k * G.dw);
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh)
        for (std::int64_t ow = 0; ow < G.ow; ++ow)
          pixels.push_back((od * G.sd * xs.h + oh * G.sh) * xs.w + ow * G.sw);
    t.in_group = G.cg * plane;
  } else {
    std::int64_t found = 0;
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh)
        for (std::int64_t ow = 0; ow < G.ow; ++ow) {
          const std::int64_t d = od * G.sd - G.pd, h = oh * G.sh - G.ph, w = ow * G.sw - G.pw;
          const bool inside = d >= 0 && d < G.id && h >= 0 && h < G.ih && w >= 0 && w < G.iw;
          pixels.push_back(inside ? (d * G.ih + h) * G.iw + w : -1);
          found += inside;
        }
    t.covers_dx = found == G.in_spatial();
    const std::int64_t plane = fwd ? G.in_spatial() : G.out_spatial();
    for (std::int64_t d = 0; d < depth; ++d) t.depth_at.push_back(d * plane);
    t.depth_stride = plane;
    t.in_group = depth * plane;
  }
  identity.resize(pixels.size());
  for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<std::int64_t>(i);
  t.gather = fwd ? std::move(pixels) : std::move(identity);
  t.scatter = fwd ? std::move(identity) : std::move(pixels);
  return t;
}

// The tables depend on the problem's geometry alone: each calling thread keeps the last
// problem's. Built in every call, they (two int64 per output pixel, 0.8 MB at 224x224) and their
// fresh pages cost the first layers (C = 3, 27 reduction rows) a fifth of their time, with the
// other thread waiting.
const ColumnTables& cached_column_tables(const Geometry& G, bool fwd, bool one_by_one,
                                         const Sizes5& xs) {
  struct Key {
    Geometry G;
    bool fwd, one_by_one;
    Sizes5 xs;
    bool operator==(const Key&) const = default;
  };
  const Key key{G, fwd, one_by_one, xs};
  thread_local std::optional<Key> last;
  thread_local ColumnTables tables;
  if (last != key) {
    last.reset();  // a throw below leaves no stale key
    tables = column_tables(G, fwd, one_by_one, xs);
    last = key;
  }
  return tables;
}

// Bytes one panel of the whole reduction may take (check() declines longer reductions).
constexpr std::int64_t kPanelBytesLimit = 16 << 20;

// Images per backward-weights chunk: about 8192 pixels each, so that the partial sums stay small
// and batch-8 56x56 layers get 3.
std::int64_t images_per_chunk(const Geometry& G) {
  const std::int64_t chunks = std::clamp<std::int64_t>(G.n * G.in_spatial() / 8192, 1, G.n);
  return (G.n + chunks - 1) / chunks;
}
std::int64_t partial_floats(const Geometry& G) {
  const std::int64_t per = images_per_chunk(G);
  return (G.n + per - 1) / per * G.g * G.kg * G.cg;
}

// dW of a stride-1 unpadded 1x1 convolution into w (bf16 bits [K][Cg]): per chunk of
// images by the kernel into `partial`, then the chunks summed in order (chunks depend on the
// problem only, so the result does not depend on the thread count).
void backward_weights(const Geometry& G, const void* x, const void* dy, void* w, float* partial) {
  nchw_gemm::WeightsArgs a{};
  a.n = G.n, a.g = G.g, a.kg = G.kg, a.cg = G.cg, a.plane = G.in_spatial();
  a.images_per_chunk = images_per_chunk(G);
  a.dy = dy, a.x = x, a.partial = partial;
  nchw_gemm::backward_weights_bf16_avx512(a);
  const std::int64_t size = G.g * G.kg * G.cg;
  add_partials_in_order(partial, partial_floats(G) / size, size, nullptr,
                        static_cast<std::uint16_t*>(w));
}

}  // namespace

std::int64_t nchw_gemm::panels_per_block(std::int64_t words, int cols) {
  const std::int64_t fit = (256 * 1024) / (words * cols * 4);
  return std::clamp<std::int64_t>(fit, 1, kMaxPanelsPerBlock);
}

std::string_view NchwGemmSolver::id() const {
  switch (kernel_) {
    case NchwGemmKernel::f32_avx512:
      return "cpu:nchw_gemm:avx512";
    case NchwGemmKernel::f32_avx2:
      return "cpu:nchw_gemm:avx2";
    case NchwGemmKernel::bf16_avx512:
      break;
  }
  return "cpu:nchw_gemm:avx512_bf16";
}

Status NchwGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(kernel_ == NchwGemmKernel::f32_avx2 ? Isa::avx2 : Isa::avx512); !s)
    return s;
  if (kernel_ == NchwGemmKernel::bf16_avx512) {
    if (auto s = check_bf16_in_place(p, "cpu:nchw_gemm:avx512"); !s) return s;
  }
  const Elements e = elements(p, kernel_);
  if (p.direction != Direction::forward && !one_by_one(p))
    return not_applicable(fmt::format("backward passes of 1x1 filters only (this one is {}x{}x{})",
                                      p.filter[0], p.filter[1], p.filter[2]));
  // Each thread packs panels of the whole reduction: bounded so that one stays within 16 MiB.
  const Geometry G = detail::geometry(p);
  const std::int64_t depth = gemm_depth(G, p.direction == Direction::forward);
  const std::int64_t most =
      kPanelBytesLimit / (4 * tile_shape(kernel_).cols) * (e == Elements::bf16_pairs ? 2 : 1);
  if (p.direction != Direction::backward_weights && depth > most)
    return not_applicable(fmt::format(
        "a reduction over {} channels per group: more than {}, its per-thread panel would "
        "exceed 16 MiB",
        depth, most));
  if (p.direction == Direction::backward_weights) {
    if (kernel_ != NchwGemmKernel::bf16_avx512)
      return not_applicable(
          "backward-weights in cpu:nchw_gemm:avx512_bf16 only (fp32's dot products are "
          "load-bound: cpu:bwdw)");
    // Rows are read in place as dot products: x's pixels must be dy's.
    if (p.stride != Dims3{1, 1, 1} || p.pad_begin != Dims3{0, 0, 0} || p.pad_end != Dims3{0, 0, 0})
      return not_applicable("backward-weights with stride 1 and no padding only (cpu:bwdw)");
  }
  return Status::ok();
}

StagingSpec NchwGemmSolver::staging(const Problem& p) const {
  // Beyond 1x1 the forward GEMM reads x zero-padded, so that every tap of a column is its first
  // element plus one offset (a 1x1 layer's padded pixels are zero columns instead).
  const Padding pad = one_by_one(p) ? Padding{} : forward_padding(p);
  StagingSpec s{Order::channels_first, Order::channels_first, pad, false};
  s.stage = elements(p, kernel_) == Elements::f32;
  return s;
}

void NchwGemmSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  if (p.direction == Direction::backward_weights) {
    layout.add(partial_floats(detail::geometry(p)));
    return;
  }
  const Elements e = elements(p, kernel_);
  layout.add(packed_filter_words(p, kernel_, e));  // 32-bit words: as many floats
  // A bf16 x's zero-padded copy (two per float), beyond 1x1.
  const Sizes5 xs = padded(sizes5(x_desc(p)), forward_padding(p));
  const bool copy = is_bf16(e) && !one_by_one(p);
  layout.add(copy ? (xs.elements() + 1) / 2 : 0);
}

Status NchwGemmSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const bool fwd = p.direction == Direction::forward;
  const Elements e = elements(p, kernel_);
  const bool bf16 = is_bf16(e);
  const TileShape shape = tile_shape(kernel_);
  float* filter = layout.get(ws, first_scratch);
  if (p.direction == Direction::backward_weights) {
    backward_weights(G, t.caller->x.data, t.caller->y.data, t.caller->w.data,
                     filter);  // the scratch holds the partial sums here
    return Status::ok();
  }
  void *x = t.x, *y = t.y;
  const bool in_place = filter_in_place(G, fwd, e);
  const void* a_filter = in_place ? (bf16 ? t.caller->w.data : t.w) : filter;
  if (bf16) {
    x = t.caller->x.data, y = t.caller->y.data;
    const auto* w = static_cast<const std::uint16_t*>(t.caller->w.data);
    if (e == Elements::bf16_widened)
      pack_filter(G, fwd, shape.rows, w, filter);
    else if (!fwd)
      nchw_gemm::pack_transposed_filter_bf16(w, G.g, gemm_depth(G, fwd), gemm_rows(G, fwd),
                                             reinterpret_cast<std::uint32_t*>(filter));
    else if (!in_place)
      pack_filter(G, fwd, shape.rows, w, reinterpret_cast<std::uint32_t*>(filter));
    if (!one_by_one(p)) {  // the staging pads fp32's x; bf16's is the caller's own
      auto* copy = reinterpret_cast<std::uint16_t*>(layout.get(ws, first_scratch + 1));
      pad_column_phases(static_cast<const std::uint16_t*>(x), sizes5(t.caller->x.desc),
                        forward_padding(p), t.xs, 1, copy);
      x = copy;
    }
  } else if (!in_place) {
    pack_filter(G, fwd, shape.rows, t.w, filter);
  }
  const ColumnTables& cols = cached_column_tables(G, fwd, one_by_one(p), t.xs);
  const std::int64_t depth = gemm_depth(G, fwd);
  const std::int64_t words = gemm_words(G, fwd, e),
                     Q = nchw_gemm::panels_per_block(words, shape.cols);
  struct Panels;  // the kernel's per-thread panels
  auto* panels = reusable_scratch<Panels, std::uint32_t>(
      static_cast<std::size_t>(omp_get_max_threads() * Q * words * shape.cols));

  nchw_gemm::Args a{};
  a.n = G.n, a.g = G.g, a.m = gemm_rows(G, fwd), a.depth = depth;
  a.columns = G.out_spatial(), a.in_group = cols.in_group, a.depth_at = cols.depth_at.data();
  a.gather = cols.gather.data(), a.scatter = cols.scatter.data();
  a.depth_stride = cols.depth_stride;
  a.a = a_filter, a.a_row_words = in_place ? words : 0;
  a.panels = panels, a.panels_per_block = Q;
  a.in = fwd ? x : y, a.out = fwd ? y : x;
  a.out_plane = fwd ? G.out_spatial() : G.in_spatial();
  a.stream_out = streams_output(G.n * (fwd ? G.k() : G.c()) * a.out_plane * (bf16 ? 2 : 4));
  // A stride above 1 leaves input pixels that no output pixel reads: their gradient is zero (+0.0
  // in fp32 and bf16 alike).
  if (!fwd && !cols.covers_dx) {
    const std::int64_t bytes = G.n * G.c() * G.in_spatial() * (bf16 ? 2 : 4);
    auto* dx = static_cast<std::byte*>(x);
    const std::int64_t parts = omp_get_max_threads(), part = (bytes + parts - 1) / parts;
#pragma omp parallel for
    for (std::int64_t i = 0; i < parts; ++i)
      if (i * part < bytes) std::memset(dx + i * part, 0, std::min(part, bytes - i * part));
  }
  switch (kernel_) {
    case NchwGemmKernel::f32_avx512:
      if (e == Elements::bf16_widened)
        nchw_gemm::run_bf16_widened_avx512(a);
      else
        nchw_gemm::run_avx512(a);
      break;
    case NchwGemmKernel::f32_avx2:
      nchw_gemm::run_avx2(a);
      break;
    case NchwGemmKernel::bf16_avx512:
      nchw_gemm::run_bf16_avx512(a);
      break;
  }
  return Status::ok();
}

}  // namespace convguard::cpu
