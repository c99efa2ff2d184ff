#include "cpu/solvers/bf16_amx_planar.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/tensor_iter.hpp"
#include "cpu/isa.hpp"
#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"

namespace convguard::cpu {
namespace bf16 {
namespace {

using detail::Geometry;

constexpr std::int64_t round_up(std::int64_t v, std::int64_t to) {
  return (v + to - 1) / to * to;
}

// Where everything lies: the grid (copies per phase: C >= 32, so never per tap column), or for
// C < 32 the windows (uses_windows), x's pair rows (x_row words apart, an odd number of lines),
// the filter's blocks, the 32-pixel chunks of the products.
struct Planar {
  AmxBwdwLayout grid;
  bool windows = false;
  std::int64_t pair_blocks = 0, pairs_padded = 0, x_row = 0, kp32 = 0, chunks = 0;
  std::vector<std::int64_t> group_x;
  PlanarSizes sizes;
};

// Every output pixel's whole window (C x taps values, in the filter's own order: r = c * taps +
// tap) as one reduction, where C < 32: per tap, C channels would fill fewer than half of a
// product's 16 pair rows (C = 3 uses 2 of 16), where the window's 27 values fill 14 of 16.
bool uses_windows(const Geometry& G) {
  return G.c() < 32;
}

// A flat tap index's (depth, row, column) in the filter, taps in (kd, kh, kw) order.
struct TapPosition {
  std::int64_t a, b, e;
};
TapPosition tap_position(const Geometry& G, std::int64_t tap) {
  return {tap / (G.kh * G.kw), tap / G.kw % G.kh, tap % G.kw};
}
// The filter's element (k, c) at a flat tap.
std::uint16_t filter_at(const Reader& w, const Geometry& G, std::int64_t k, std::int64_t c,
                        std::int64_t tap) {
  const TapPosition t = tap_position(G, tap);
  return w.at(k, c, t.a, t.b, t.e);
}

Planar planar(const Geometry& G) {
  Planar z;
  z.kp32 = round_up(G.k(), 32);
  if (uses_windows(G)) {
    // One group at offset 0; the pixels are the output's own, (n, od, oh, ow) flat.
    z.windows = true;
    z.pair_blocks = blocks16(pairs(G.c() * G.taps()));
    z.pairs_padded = z.pair_blocks * 16;
    z.chunks = (G.n * G.od * G.oh * G.ow + 31) / 32;
    z.x_row = round_up(z.chunks * 32, 16);
    if (z.x_row / 16 % 2 == 0) z.x_row += 16;
    z.group_x = {0};
    z.sizes.x_words = z.pairs_padded * z.x_row;
    z.sizes.w_elements = z.pair_blocks * z.kp32 * 32;
    return z;
  }
  z.grid = amx_backward_weights_layout(G);
  z.pair_blocks = blocks16(pairs(G.c()));
  z.pairs_padded = z.pair_blocks * 16;
  z.chunks = z.grid.chunks;
  z.x_row = round_up(z.grid.chunks * 32 + z.grid.max_offset, 16);
  if (z.x_row / 16 % 2 == 0) z.x_row += 16;
  for (std::size_t g = 0; g < z.grid.group_offset.size(); ++g)
    z.group_x.push_back(z.grid.group_phase[g] * z.pairs_padded * z.x_row + z.grid.group_offset[g]);
  z.sizes.x_words = static_cast<std::int64_t>(z.grid.phases.size()) * z.pairs_padded * z.x_row;
  z.sizes.w_elements = static_cast<std::int64_t>(z.group_x.size()) * z.pair_blocks * z.kp32 * 32;
  return z;
}

}  // namespace

std::int64_t window_copy_bytes(const Geometry& G) {
  return uses_windows(G) ? planar(G).sizes.x_words * 4 : 0;
}

bool planar_takes_pointwise(const Geometry& G, const std::array<std::int64_t, 5>& xst) {
  return !uses_windows(G) && G.taps() == 1 && G.pd == 0 && G.ph == 0 && G.pw == 0 && xst[4] == 1 &&
         (G.od - 1) * G.sd < G.id && (G.oh - 1) * G.sh < G.ih && (G.ow - 1) * G.sw < G.iw;
}

namespace {

// Words of one chunk's pairs, and the chunks of a group whose channel blocks run over them all:
// their pairs at most 512 KiB (so they stay in L2 beside one channel block's filter rows) and at
// most 16 chunks, at least one.
std::int64_t chunk_words(const Planar& z) {
  return z.pair_blocks * 512;
}
std::int64_t chunks_per_group(const Planar& z) {
  return std::clamp<std::int64_t>(128 * 1024 / chunk_words(z), 1, 16);
}

// Groups for `chunks` chunks: whole rounds of the threads where the chunks allow, none larger
// than chunks_per_group.
std::int64_t chunk_groups(const Planar& z, std::int64_t chunks, std::int64_t threads) {
  const std::int64_t need = (chunks + chunks_per_group(z) - 1) / chunks_per_group(z);
  return std::min(chunks, (need + threads - 1) / threads * threads);
}

// x as channel-pair rows on the grid: one (phase, pair, n, od') plane of OHv rows at a time. The
// padded pairs (past C) are zero rows; what lies past the last plane is read only by grid pixels
// that are not outputs.
void copy_pairs_to_grid(const Geometry& G, const Planar& z, const Reader& x, std::uint32_t* xw) {
  const AmxBwdwLayout& L = z.grid;
  const std::int64_t C = G.c(), wv = L.wv, planes = G.n * L.odv, plane = L.ohv * wv;
  const std::int64_t phases = static_cast<std::int64_t>(L.phases.size());
  const auto& st = x.strides();
  const std::int64_t count = phases * z.pairs_padded * planes;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t od = i % L.odv, n = i / L.odv % G.n, cp = i / planes % z.pairs_padded;
    const std::int64_t p = i / (planes * z.pairs_padded);
    std::uint32_t* dst = xw + (p * z.pairs_padded + cp) * z.x_row + (n * L.odv + od) * plane;
    const std::int64_t id = od * G.sd + L.phases[p][0] - G.pd, c0 = 2 * cp;
    if (c0 >= C || id < 0 || id >= G.id) {
      std::memset(dst, 0, static_cast<std::size_t>(plane) * 4);
      continue;
    }
    const std::int64_t w0 = L.phases[p][2] - G.pw;
    const std::int64_t lo = std::clamp<std::int64_t>((-w0 + G.sw - 1) / G.sw, 0, wv);
    const std::int64_t hi = std::clamp<std::int64_t>((G.iw - w0 + G.sw - 1) / G.sw, lo, wv);
    const std::uint16_t* base0 = x.data() + n * st[0] + c0 * st[1] + id * st[2];
    const std::uint16_t* base1 = c0 + 1 < C ? base0 + st[1] : nullptr;
    for (std::int64_t oh = 0; oh < L.ohv; ++oh, dst += wv) {
      const std::int64_t ih = oh * G.sh + L.phases[p][1] - G.ph;
      if (ih < 0 || ih >= G.ih) {
        std::memset(dst, 0, static_cast<std::size_t>(wv) * 4);
        continue;
      }
      std::memset(dst, 0, static_cast<std::size_t>(lo) * 4);
      const std::uint16_t* r0 = base0 + ih * st[3] + w0 * st[4];
      const std::uint16_t* r1 = base1 ? base1 + ih * st[3] + w0 * st[4] : nullptr;
      if (G.sw == 1 && st[4] == 1 && r1) {  // constant strides, which the compiler vectorizes
        for (std::int64_t w = lo; w < hi; ++w) dst[w] = r0[w] | std::uint32_t{r1[w]} << 16;
      } else {
        const std::int64_t step = G.sw * st[4];
        for (std::int64_t w = lo; w < hi; ++w)
          dst[w] = r0[w * step] | (r1 ? std::uint32_t{r1[w * step]} << 16 : 0u);
      }
      std::memset(dst + hi, 0, static_cast<std::size_t>(wv - hi) * 4);
    }
  }
}

// The filter as [tap][32-channel block][kp32][32] bf16, zero past C and K. 16 output channels at
// a time: each one's [C][taps] transposed to [taps][C padded to 32] (16 x 16 blocks where taps are
// dense), then every (tap, block)'s 16 rows written as one contiguous kilobyte. Writing a row per
// output channel instead scattered 64-byte stores over taps x blocks streams kp32 x 64 bytes apart
// (one L1 set at 512 channels): res5's 3x3 filter took 2.6 ms, with a memset of the whole.
void pack_planar_filter(const Geometry& G, const Planar& z, const Reader& w, std::uint16_t* wp) {
  const std::int64_t C = G.c(), K = G.k(), taps = G.taps();
  const std::int64_t c_pad = z.pair_blocks * 32, k_blocks = z.kp32 / 16;
  const auto& st = w.strides();
  const bool dense_taps = st[3] == G.kw * st[4] && st[2] == G.kh * st[3];
#pragma omp parallel
  {
    // [16 output channels][taps][c_pad], and one channel's [taps][C] where C is not c_pad.
    std::vector<std::uint16_t> rows(static_cast<std::size_t>(16 * taps * c_pad));
    std::vector<std::uint16_t> one(C == c_pad ? 0 : static_cast<std::size_t>(taps * C));
#pragma omp for schedule(static)
    for (std::int64_t kb = 0; kb < k_blocks; ++kb) {
      for (std::int64_t i = 0; i < 16; ++i) {
        const std::int64_t k = kb * 16 + i;
        std::uint16_t* row = rows.data() + i * taps * c_pad;
        if (k >= K) {
          std::memset(row, 0, static_cast<std::size_t>(taps * c_pad) * 2);
          continue;
        }
        std::uint16_t* out = C == c_pad ? row : one.data();
        if (dense_taps) {
          load_bf16_rows_avx512(w.data() + k * st[0], st[1], st[4], taps, C, out);
        } else {
          for (std::int64_t tap = 0; tap < taps; ++tap)
            for (std::int64_t c = 0; c < C; ++c)
              out[tap * C + c] = filter_at(w, G, k, c, tap);
        }
        if (C == c_pad) continue;
        for (std::int64_t tap = 0; tap < taps; ++tap) {
          std::memcpy(row + tap * c_pad, out + tap * C, static_cast<std::size_t>(C) * 2);
          std::memset(row + tap * c_pad + C, 0, static_cast<std::size_t>(c_pad - C) * 2);
        }
      }
      for (std::int64_t tap = 0; tap < taps; ++tap)
        for (std::int64_t cb = 0; cb < z.pair_blocks; ++cb) {
          std::uint16_t* dst = wp + ((tap * z.pair_blocks + cb) * z.kp32 + kb * 16) * 32;
          for (std::int64_t i = 0; i < 16; ++i)
            std::memcpy(dst + i * 32, rows.data() + (i * taps + tap) * c_pad + cb * 32, 64);
        }
    }
  }
}

// x as window pair rows (uses_windows): row j holds, for every output pixel v (n, od, oh, ow
// flat), window values r = 2j (low half) and 2j + 1 (high half), r = c * taps + tap; zero where
// the tap falls in the padding, for r >= C x taps, and past the last pixel. One (row, n, od, oh)
// line of OW pixels at a time, each half in its own pass (the two values have their own taps).
void copy_windows(const Geometry& G, const Planar& z, const Reader& x, std::uint32_t* xw) {
  const std::int64_t taps = G.taps(), R = G.c() * taps, lines = G.n * G.od * G.oh;
  const std::int64_t pixels = lines * G.ow;
  const auto& st = x.strides();
  const std::int64_t count = z.pairs_padded * lines;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i / lines, line = i % lines;
    std::uint32_t* row = xw + j * z.x_row;
    if (line == 0) std::memset(row + pixels, 0, static_cast<std::size_t>(z.x_row - pixels) * 4);
    std::uint32_t* dst = row + line * G.ow;
    std::memset(dst, 0, static_cast<std::size_t>(G.ow) * 4);
    const std::int64_t oh = line % G.oh, od = line / G.oh % G.od, n = line / (G.oh * G.od);
    for (int half = 0; half < 2; ++half) {
      const std::int64_t r = 2 * j + half;
      if (r >= R) break;
      const std::int64_t c = r / taps, tap = r % taps;
      const auto [a, b, e] = tap_position(G, tap);
      const std::int64_t id = od * G.sd + a * G.dd - G.pd, ih = oh * G.sh + b * G.dh - G.ph;
      if (id < 0 || id >= G.id || ih < 0 || ih >= G.ih) continue;
      // Output pixels whose tap lies in x: 0 <= ow * sw + w0 < IW.
      const std::int64_t w0 = e * G.dw - G.pw;
      const std::int64_t lo = std::clamp<std::int64_t>((-w0 + G.sw - 1) / G.sw, 0, G.ow);
      const std::int64_t hi = std::clamp<std::int64_t>((G.iw - w0 + G.sw - 1) / G.sw, lo, G.ow);
      const std::uint16_t* src = x.data() + n * st[0] + c * st[1] + id * st[2] + ih * st[3];
      const int shift = 16 * half;
      if (G.sw == 1 && st[4] == 1) {  // constant strides, which the compiler vectorizes
        const std::uint16_t* s0 = src + w0;
        for (std::int64_t w = lo; w < hi; ++w) dst[w] |= std::uint32_t{s0[w]} << shift;
      } else {
        for (std::int64_t w = lo; w < hi; ++w)
          dst[w] |= std::uint32_t{src[(w * G.sw + w0) * st[4]]} << shift;
      }
    }
  }
}

// The filter for the windows: [pair_blocks][kp32][32] bf16, output channel k's row the window's
// values in copy_windows' order (r = c * taps + tap), zero past C x taps and K.
void pack_window_filter(const Geometry& G, const Planar& z, const Reader& w, std::uint16_t* wp) {
  const std::int64_t K = G.k(), taps = G.taps(), R = G.c() * taps;
  std::memset(wp, 0, static_cast<std::size_t>(z.sizes.w_elements) * 2);
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t r = 0; r < R; ++r) {
      wp[((r / 32) * z.kp32 + k) * 32 + r % 32] = filter_at(w, G, k, r / taps, r % taps);
    }
}

// Each item's [32 channels][32 grid pixels] block into y: the runs of output pixels in it, rounded
// to bf16 (store_bf16_avx512: pixels by 16 where y is channels-first, transposed 16 x 16 where it
// is channels-last). The grid is wv x ohv x odv pixels an image (the pointwise path's is the
// output itself); a run ends at its grid row, or, where the grid is the output and y's planes
// are dense, at its image (`whole_planes`).
struct Output {
  const Geometry& G;
  std::int64_t wv, ohv, odv, pixels;
  std::uint16_t* y;
  std::array<std::int64_t, 5> st;
  bool whole_planes;
  Output(const Geometry& g, std::int64_t grid_w, std::int64_t grid_h, std::int64_t grid_d,
         std::int64_t grid_pixels, const ConvTensors& t)
      : G(g),
        wv(grid_w),
        ohv(grid_h),
        odv(grid_d),
        pixels(grid_pixels),
        y(static_cast<std::uint16_t*>(t.y.data)),
        st(detail::shape5(t.y.desc).strides) {
    // (shape5 gives a 2D tensor's depth stride 0.)
    whole_planes = wv == G.ow && ohv == G.oh && odv == G.od && st[3] == G.ow * st[4] &&
                   (G.od == 1 || st[2] == G.oh * st[3]);
  }
  static void store(const void* context, std::int64_t chunk, std::int64_t k0, std::int64_t channels,
                    const float* block) {
    const Output& o = *static_cast<const Output*>(context);
    const Geometry& G = o.G;
    const std::int64_t first = chunk * 32, end = std::min(first + 32, o.pixels);
    for (std::int64_t v = first; v < end;) {
      const std::int64_t w = v % o.wv, row = v / o.wv;
      const std::int64_t oh = row % o.ohv, od = row / o.ohv % o.odv, n = row / (o.ohv * o.odv);
      if (w >= G.ow || oh >= G.oh || od >= G.od) {
        v += o.wv - w;  // the rest of this grid row
        continue;
      }
      const std::int64_t to_end = o.whole_planes ? ((G.od - od) * G.oh - oh) * G.ow - w : G.ow - w;
      const std::int64_t run = std::min(to_end, end - v);
      store_bf16_avx512(
          block + (v - first), 32, channels, run,
          o.y + n * o.st[0] + k0 * o.st[1] + od * o.st[2] + oh * o.st[3] + w * o.st[4], o.st[4],
          o.st[1]);
      v += run;
    }
  }
};

// Each thread's pair buffer, kept from call to call (reusable_scratch.hpp): sized at run time for
// the threads that run, so the workspace does not depend on the thread count.
struct PointwiseBuffers {};

void forward_pointwise(const Geometry& G, const Planar& z, const ConvTensors& t,
                       const std::uint16_t* wp) {
  const auto xst = detail::shape5(t.x.desc).strides;
  const std::int64_t pixels = G.n * G.od * G.oh * G.ow, chunks = (pixels + 31) / 32;
  const std::int64_t kblocks = z.kp32 / 32;
  AmxPointwiseForwardArgs a{};
  a.chunk_words = chunk_words(z);
  a.buffer_chunks = std::min(chunks_per_group(z), chunks);
  a.threads = omp_get_max_threads();
  // Tile rows on whole lines: a line more than the buffers, skipped up to the first line.
  std::uint32_t* buffer = reusable_scratch<PointwiseBuffers, std::uint32_t>(
      static_cast<std::size_t>(a.threads * a.buffer_chunks * a.chunk_words + 16));
  buffer += -reinterpret_cast<std::uintptr_t>(buffer) % 64 / 4;
  a.groups = chunk_groups(z, chunks, a.threads);
  // Fewer groups than threads (a few chunks): the channel blocks split too.
  a.k_parts = a.groups >= a.threads ? 1 : std::min(kblocks, (a.threads + a.groups - 1) / a.groups);
  a.kb_per = (kblocks + a.k_parts - 1) / a.k_parts;
  a.k_parts = (kblocks + a.kb_per - 1) / a.kb_per;
  a.x = static_cast<const std::uint16_t*>(t.x.data);
  for (int i = 0; i < 4; ++i) a.xs[i] = xst[i];
  a.c = G.c();
  a.pair_blocks = z.pair_blocks;
  a.od = G.od;
  a.oh = G.oh;
  a.ow = G.ow;
  a.sd = G.sd;
  a.sh = G.sh;
  a.sw = G.sw;
  a.pixels = pixels;
  // An image's output pixel p at x + p: stride 1, output planes the size of x's (an end padding
  // below zero makes them smaller) and x's planes dense.
  a.x_dense = G.sd == 1 && G.sh == 1 && G.sw == 1 && G.oh == G.ih && G.ow == G.iw &&
              xst[3] == G.iw && (G.id == 1 || xst[2] == G.ih * G.iw);
  a.w = wp;
  a.kp32 = z.kp32;
  a.k = G.k();
  a.buffer = buffer;
  const Output out(G, G.ow, G.oh, G.od, pixels, t);
  a.store = &Output::store;
  a.context = &out;
  forward_amx_pointwise(a);
}

}  // namespace

PlanarSizes planar_sizes(const Geometry& G, const std::array<std::int64_t, 5>& x_strides) {
  PlanarSizes sizes = planar(G).sizes;
  if (planar_takes_pointwise(G, x_strides)) sizes.x_words = 0;  // x is read in place
  return sizes;
}

Status forward_planar(const Geometry& G, const ConvTensors& t, std::uint32_t* xw,
                      std::int64_t x_words, std::uint16_t* wp, PlanarTimes* times) {
  const Planar z = planar(G);
  const bool pointwise = planar_takes_pointwise(G, detail::shape5(t.x.desc).strides);
  // The path follows the tensors, the workspace the problem: a caller's x strides that differ
  // from the problem's could ask for the grid with no room for it.
  if (!pointwise && x_words < z.sizes.x_words)
    return {StatusCode::invalid_argument,
            fmt::format("x's pair copy needs {} words, the workspace holds {}", z.sizes.x_words,
                        x_words)};
  const double t0 = times ? omp_get_wtime() : 0;
  if (z.windows)
    copy_windows(G, z, Reader(t.x), xw);
  else if (!pointwise)
    copy_pairs_to_grid(G, z, Reader(t.x), xw);
  const double t1 = times ? omp_get_wtime() : 0;
  if (z.windows)
    pack_window_filter(G, z, Reader(t.w), wp);
  else
    pack_planar_filter(G, z, Reader(t.w), wp);
  const double t2 = times ? omp_get_wtime() : 0;
  if (pointwise) {
    forward_pointwise(G, z, t, wp);
  } else {
    // The windows' pixels are the output's own; the grid's are wv x ohv x odv an image.
    const Output out = z.windows ? Output(G, G.ow, G.oh, G.od, G.n * G.od * G.oh * G.ow, t)
                                 : Output(G, z.grid.wv, z.grid.ohv, z.grid.odv, z.grid.pixels, t);
    AmxPlanarForwardArgs a{};
    a.x = xw;
    a.x_row = z.x_row;
    a.group_x = z.group_x.data();
    a.groups = static_cast<std::int64_t>(z.group_x.size());
    a.pair_blocks = z.pair_blocks;
    a.w = wp;
    a.kp32 = z.kp32;
    a.k = G.k();
    a.chunks = z.chunks;
    a.chunk_groups = chunk_groups(z, a.chunks, omp_get_max_threads());
    a.store = &Output::store;
    a.context = &out;
    forward_amx_planar(a);
  }
  if (times) *times = {(t1 - t0) * 1e3, (t2 - t1) * 1e3, (omp_get_wtime() - t2) * 1e3};
  return Status::ok();
}

}  // namespace bf16

Status Bf16PlanarAmxSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_amx_bf16_cpu(); !s) return s;
  if (p.dtype != DType::bf16) return not_applicable("bf16 problems only");
  if (p.direction != Direction::forward)
    return not_applicable("forward only (cpu:bf16_direct:amx_bf16 computes the backward passes)");
  if (p.g != 1) return not_applicable(fmt::format("one group only (g={})", p.g));
  if (const std::int64_t bytes = bf16::window_copy_bytes(detail::geometry(p));
      bytes > bf16::kMaxWindowBytes)
    return not_applicable(fmt::format(
        "C < 32 takes each pixel's window: its copy would be {} MiB, more than {} MiB",
        bytes >> 20, bf16::kMaxWindowBytes >> 20));
  return request_amx_tile_state();
}

StagingSpec Bf16PlanarAmxSolver::staging(const Problem& p) const {
  StagingSpec s;
  // The caller's bf16 tensors are read and written directly; x_pad only sizes xs.
  s.stage = false;
  s.x_pad = forward_padding(p);
  return s;
}

void Bf16PlanarAmxSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const bf16::PlanarSizes z =
      bf16::planar_sizes(detail::geometry(p), detail::shape5(x_desc(p)).strides);
  layout.add(z.x_words);               // 32-bit pair words, reserved as floats
  layout.add((z.w_elements + 1) / 2);  // bf16 pairs
}

Status Bf16PlanarAmxSolver::compute(const Problem&, const StagedTensors& t, std::span<std::byte> ws,
                                    const WorkspaceLayout& layout, int first_scratch) const {
  // The x slot's size: its words end where the filter's slot begins.
  auto* xw = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch));
  auto* wp = reinterpret_cast<std::uint16_t*>(layout.get(ws, first_scratch + 1));
  return bf16::forward_planar(t.geo, *t.caller, xw, reinterpret_cast<std::uint32_t*>(wp) - xw, wp);
}

}  // namespace convguard::cpu
