// Kernels of cpu:bwdw, generic over the vector width W (floats). Included only by the per-ISA
// files bwdw_avx512.cpp / bwdw_avx2.cpp, compiled with that ISA's flags (a target attribute
// would not reach the loops OpenMP outlines); internal linkage only (see simd.hpp).
//
// dW[g][k][u][m] = sum over output pixels p of x[p, u][m] * dy[p][g*Kg + k], on channels-last x
// (zero padding materialised, so a window never leaves the buffer; or channels-first x of a 1x1
// filter, packed pixel-major per chunk); u is an outer tap, m the contiguous span of x that pixel
// p multiplies at u (bwdw_entry.hpp). A register tile holds NV vectors of m x tile_k output
// channels; per pixel it loads NV vectors of x and broadcasts tile_k values of dy, with no
// pointer tables: consecutive pixels of an output row are sw*C floats apart in x.
#pragma once

#include <cstdint>
#include <cstring>

#include "cpu/solvers/bwdw_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::bwdw {
namespace {

using simd::broadcast;
using simd::lesser;
using simd::load;
using simd::Vec;

// The pixels of one chunk: `rows` output rows of `ow` pixels each; row r's first pixel reads x
// at x_row[r] (+ the tile's tap and m offset); x_step floats (sw*C) separate a row's pixels.
struct Chunk {
  const std::int64_t* x_row;
  std::int64_t rows, ow, x_step;
  const std::int64_t* dy_row;  // channels-first dy: row i's first pixel, read directly
  std::int64_t dy_chan;
};

// The running sums of one tile: NV vectors of m (NV*W floats) x kK output channels, the rows of
// dst (ld apart).
template <int W, int NV>
struct Tile {
  using vf = typename Vec<W>::type;
  static constexpr int kM = NV * W, kK = tile_k(W, NV);
  vf acc[kK][NV];

  // Starts from zero on the item's first chunk (dW is never read before it is written), else
  // from what the previous chunk stored. Whole tiles move as vectors (a memcpy of a run-time
  // length compiled to `rep movsq` and took 12% of the time).
  [[gnu::always_inline]] inline void begin(const float* dst, std::int64_t ld, int mvalid,
                                           int kvalid, bool first) {
    for (int j = 0; j < kK; ++j) {
      for (int v = 0; v < NV; ++v) acc[j][v] = vf{};
      if (first || j >= kvalid) continue;
      const float* row = dst + j * ld;
      float tmp[kM] = {};
      if (mvalid < kM)
        row = static_cast<const float*>(
            std::memcpy(tmp, row, static_cast<std::size_t>(mvalid) * sizeof(float)));
      for (int v = 0; v < NV; ++v) acc[j][v] = load<W>(row + v * W);
    }
  }

  [[gnu::always_inline]] inline void end(float* dst, std::int64_t ld, int mvalid,
                                         int kvalid) const {
    for (int j = 0; j < kvalid; ++j) {
      float* row = dst + j * ld;
      if (mvalid == kM) {
        std::memcpy(row, &acc[j], sizeof(acc[j]));
        continue;
      }
      float tmp[kM];
      std::memcpy(tmp, &acc[j], sizeof(acc[j]));
      std::memcpy(row, tmp, static_cast<std::size_t>(mvalid) * sizeof(float));
    }
  }

  // Stores into a channels-first dW: value m of row j goes to dst[j * ld + at[m]].
  [[gnu::always_inline]] inline void scatter(float* dst, std::int64_t ld, const std::int64_t* at,
                                             int mvalid, int kvalid) const {
    for (int j = 0; j < kvalid; ++j) {
      float tmp[kM];
      std::memcpy(tmp, &acc[j], sizeof(acc[j]));
      for (int i = 0; i < mvalid; ++i) dst[j * ld + at[i]] = tmp[i];
    }
  }

  // x: the chunk's x at this tile's tap and m; dy: the chunk's dy for this tile's channels,
  // packed per pixel. A partial tile of m loads all NV vectors: the lanes past the span (the
  // next pixel's x, or the staged buffer's slack: bwdw.cpp stages x whenever m is not a multiple
  // of the tile) are never stored. Masked loads instead made GCC spill the accumulators.
  [[gnu::always_inline]] inline void accumulate(const Chunk& c, const float* x, const float* dy) {
    const float* yp = dy;
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const float* xp = x + c.x_row[r];
      for (std::int64_t o = 0; o < c.ow; ++o, xp += c.x_step, yp += kK) {
        vf xv[NV];
        for (int v = 0; v < NV; ++v) xv[v] = load<W>(xp + v * W);
        for (int j = 0; j < kK; ++j) {
          const vf b = broadcast<W>(yp + j);
          for (int v = 0; v < NV; ++v) acc[j][v] += xv[v] * b;
        }
      }
    }
  }

  // The same with channels-first dy read in place (dy: at this tile's first channel): a row's
  // kK channels are kK sequential streams, L1-resident across the m tiles, so packing them per
  // tile (as much work as one tile's broadcasts where m has a single tile) is not needed. A
  // partial tile of k repeats its last channel instead of reading past dy.
  [[gnu::always_inline]] inline void accumulate_direct(const Chunk& c, const float* x,
                                                       const float* dy, int kvalid) {
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const float* xp = x + c.x_row[r];
      const float* yj[kK];
      for (int j = 0; j < kK; ++j)
        yj[j] = dy + c.dy_row[r] + (j < kvalid ? j : kvalid - 1) * c.dy_chan;
      for (std::int64_t o = 0; o < c.ow; ++o, xp += c.x_step) {
        vf xv[NV];
        for (int v = 0; v < NV; ++v) xv[v] = load<W>(xp + v * W);
        for (int j = 0; j < kK; ++j) {
          const vf b = broadcast<W>(yj[j] + o);
          for (int v = 0; v < NV; ++v) acc[j][v] += xv[v] * b;
        }
      }
    }
  }
};

// Where a chunk's pixels are: row i of the chunk starts at x_row[i] in x and dy_row[i] in dy;
// `step` separates a row's pixels and `chan` the channels (channels-last: sw*C and 1 in x, K and
// 1 in dy; channels-first: sw and the plane size).
struct Rows {
  std::int64_t x_row[kMaxChunkRows], dy_row[kMaxChunkRows];
  std::int64_t x_step, x_chan, dy_step, dy_chan;
};

// dy of a chunk's pixels for output channels [k, k + kvalid), kK per pixel (zeros after kvalid):
// contiguous, so the tile's broadcasts stay in L1 across the item's m tiles (in channels-last dy
// one pixel's channels are K floats apart, and at K = 256 the pixels of a chunk share 4 L1 sets).
template <int kK>
void pack_dy(const float* dy, const Rows& rw, std::int64_t rows, std::int64_t ow, int kvalid,
             float* out) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* src = dy + rw.dy_row[i];
    float* dst = out + i * ow * kK;
    if (kvalid == kK && rw.dy_chan == 1) {
      for (std::int64_t o = 0; o < ow; ++o)
        std::memcpy(dst + o * kK, src + o * rw.dy_step, kK * sizeof(float));
      continue;
    }
    for (int j = 0; j < kK; ++j)
      for (std::int64_t o = 0; o < ow; ++o)
        dst[o * kK + j] = j < kvalid ? src[j * rw.dy_chan + o * rw.dy_step] : 0.f;
  }
}

// An element as fp32: itself, or bf16 bits widened (a bf16 value is an fp32's upper half). Not
// dtype.hpp's bfloat_to_float: an inline function with external linkage in a file compiled with
// ISA flags could become the one copy every caller links to (see simd.hpp).
inline float to_f32(float v) {
  return v;
}
inline float to_f32(std::uint16_t bits) {
  const std::uint32_t u = std::uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Channels-first x (1x1 filters only): the chunk's x for m in [0, mvalid) as [pixel][width],
// zeros after mvalid, so the tiles load it like channels-last x; it is reused by every k tile.
// Pixel-major order: one pass touches every channel's row at once, so up to `width` cache misses
// are in flight (channel by channel, each row's few lines were waited for in turn: 3x slower).
// T: fp32, or the caller's bf16 widened here (StagingSpec::caller_x).
template <class T>
void pack_x(const T* x, const Rows& rw, std::int64_t rows, std::int64_t ow, std::int64_t mvalid,
            std::int64_t width, float* out) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const T* src = x + rw.x_row[i];
    for (std::int64_t o = 0; o < ow; ++o) {
      float* dst = out + (i * ow + o) * width;
      const T* px = src + o * rw.x_step;
      for (std::int64_t m = 0; m < mvalid; ++m) dst[m] = to_f32(px[m * rw.x_chan]);
      for (std::int64_t m = mvalid; m < width; ++m) dst[m] = 0.f;
    }
  }
}

// The caller's channels-first bf16 dy of a chunk for output channels [0, kvalid) from dy (at the
// tile's first channel), widened to fp32 as [channel][row][pixel] with rows ow apart and channels
// rows * ow apart (what accumulate_direct reads through widened_row and that channel step).
inline void widen_dy(const std::uint16_t* dy, const Rows& rw, std::int64_t rows, std::int64_t ow,
                     int kvalid, float* out) {
  for (int j = 0; j < kvalid; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::uint16_t* src = dy + j * rw.dy_chan + rw.dy_row[i];
      float* dst = out + (j * rows + i) * ow;
      for (std::int64_t o = 0; o < ow; ++o) dst[o] = to_f32(src[o]);
    }
}

// Offset in padded channels-last x of outer tap u's window start, from each pixel's origin.
inline std::int64_t tap_offset(const Geometry& G, const Shape& S, const Sizes5& xs,
                               std::int64_t u) {
  std::int64_t a, b, e = 0;
  if (S.wide) {
    a = u / G.kh, b = u % G.kh;
  } else {
    a = u / (G.kh * G.kw), b = (u / G.kw) % G.kh, e = u % G.kw;
  }
  return ((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * G.c();
}

// One work item: group g, the m block from m0 and the k block from k0, every outer tap, over
// output rows [r_begin, r_end), into dst (the [K][outer][m] sums of this slice). The taps are the
// innermost loop but the tiles: a chunk's dy is read from memory once for all of them (7 taps
// each streaming dy made the C = 3 first layer memory-bound).
template <int W, int NV>
void item(const Geometry& G, const Shape& S, const StagedTensors& t, float* dst, std::int64_t g,
          std::int64_t m0, std::int64_t k0, std::int64_t r_begin, std::int64_t r_end) {
  constexpr int kK = tile_k(W, NV), kM = NV * W;
  const Sizes5& xs = t.xs;
  const std::int64_t C = G.c(), K = G.k(), plane = xs.d * xs.h * xs.w;
  const bool cf = S.channels_first, dy_cf = S.dy_channels_first;
  const std::int64_t m_end = lesser(m0 + S.mblock, S.m), k_end = lesser(k0 + S.kblock, G.kg);
  const std::int64_t ld = S.outer * S.m;  // between output channels in dst
  float* out = dst + g * G.kg * ld;
  const std::int64_t chunk_rows = S.chunk_rows;
  // Channels-first dW: where each m of the block lands in a row of dW ([Cg][taps]).
  std::int64_t* w_at = S.w_channels_first ? new std::int64_t[m_end - m0] : nullptr;
  for (std::int64_t m = m0; w_at && m < m_end; ++m)
    w_at[m - m0] = S.wide ? (m % G.cg) * G.taps() + m / G.cg : m * G.taps();
  const std::int64_t width = (m_end - m0 + kM - 1) / kM * kM;  // of the packed x (cf)
  Rows* rw = new Rows;
  rw->x_step = cf ? G.sw : G.sw * C, rw->x_chan = cf ? plane : 1;
  rw->dy_step = dy_cf ? 1 : K, rw->dy_chan = dy_cf ? G.out_spatial() : 1;
  float* dy_tile = new float[static_cast<std::size_t>(chunk_rows * G.ow * kK)];
  float* x_tile = cf ? new float[static_cast<std::size_t>(chunk_rows * G.ow * width)] : nullptr;
  std::int64_t tile_row[kMaxChunkRows];  // x rows as the tiles read them (cf: in x_tile)
  // bf16 x and dy left to the kernel (StagingSpec::caller_x, caller_y, which bwdw.cpp sets for
  // bf16 problems only: a null staged view means the caller's bf16): widened per chunk, dy into
  // dy_tile as [channel][row][pixel] read through widened_row.
  const auto* x16 = t.x ? nullptr : static_cast<const std::uint16_t*>(t.caller->x.data);
  const auto* y16 = t.y ? nullptr : static_cast<const std::uint16_t*>(t.caller->y.data);
  std::int64_t widened_row[kMaxChunkRows];
  for (std::int64_t r0 = r_begin; r0 < r_end; r0 += chunk_rows) {
    const std::int64_t rows = lesser(chunk_rows, r_end - r0);
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t r = r0 + i, oh = r % G.oh, od = (r / G.oh) % G.od, n = r / (G.oh * G.od);
      const std::int64_t pixel = ((n * xs.d + od * G.sd) * xs.h + oh * G.sh) * xs.w;
      rw->x_row[i] = cf ? n * (C - 1) * plane + pixel : pixel * C;
      rw->dy_row[i] = dy_cf ? (n * K * G.od + od) * G.oh * G.ow + oh * G.ow : r * G.ow * K;
      tile_row[i] = cf ? i * G.ow * width : rw->x_row[i];
      widened_row[i] = i * G.ow;
    }
    const std::int64_t x_at = (g * G.cg + (cf ? m0 : 0)) * rw->x_chan;
    const float* x = t.x ? t.x + x_at : nullptr;
    if (cf && x16)
      pack_x(x16 + x_at, *rw, rows, G.ow, m_end - m0, width, x_tile);
    else if (cf)
      pack_x(x, *rw, rows, G.ow, m_end - m0, width, x_tile);
    const Chunk c{tile_row, rows, G.ow, cf ? width : rw->x_step, rw->dy_row, rw->dy_chan};
    const Chunk widened{tile_row, rows, G.ow, c.x_step, widened_row, rows * G.ow};
    for (std::int64_t k = k0; k < k_end; k += kK) {
      const int kvalid = static_cast<int>(lesser(kK, k_end - k));
      const std::int64_t dy_at = (g * G.kg + k) * rw->dy_chan;
      const float* dy_k = y16 ? dy_tile : t.y + dy_at;
      if (y16)
        widen_dy(y16 + dy_at, *rw, rows, G.ow, kvalid, dy_tile);
      else if (!dy_cf)
        pack_dy<kK>(dy_k, *rw, rows, G.ow, kvalid, dy_tile);
      for (std::int64_t u = 0; u < S.outer; ++u) {
        const float* xu = cf ? x_tile - m0 : x + tap_offset(G, S, xs, u);
        for (std::int64_t m = m0; m < m_end; m += kM) {
          const int mvalid = static_cast<int>(lesser(kM, m_end - m));
          Tile<W, NV> tile;
          // With a channels-first dW the item is one chunk (shape()): no sums to read back.
          float* d = out + k * ld + u * S.m + m;
          tile.begin(d, ld, mvalid, kvalid, r0 == r_begin || w_at);
          if (dy_cf)
            tile.accumulate_direct(y16 ? widened : c, xu + m, dy_k, kvalid);
          else
            tile.accumulate(c, xu + m, dy_tile);
          if (w_at) {
            const std::int64_t tap0 = S.wide ? u * G.kw : u;
            tile.scatter(out + k * ld + tap0, ld, w_at + (m - m0), mvalid, kvalid);
            continue;
          }
          tile.end(d, ld, mvalid, kvalid);
        }
      }
    }
  }
  delete[] w_at;
  delete[] x_tile;
  delete[] dy_tile;
  delete rw;
}

// The entry point each per-ISA file defines under its own name. Work items (and row slices) are
// independent and each is summed in one fixed order, so the result does not depend on the
// thread count or the schedule; slices' partial sums are then added in slice order.
template <int W>
void run(const Geometry& G, const StagedTensors& t, float* partials, CallerLayout caller) {
  const Shape S = shape(G, W, caller);
  const std::int64_t mblocks = (S.m + S.mblock - 1) / S.mblock;
  const std::int64_t kblocks = (G.kg + S.kblock - 1) / S.kblock;
  const std::int64_t dw_floats = G.k() * S.outer * S.m;
  float* const out = S.slices > 1 ? partials : t.w;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t i = 0; i < S.slices * S.items; ++i) {
    std::int64_t rest = i;
    const std::int64_t kb = rest % kblocks;
    rest /= kblocks;
    const std::int64_t mb = rest % mblocks;
    rest /= mblocks;
    const std::int64_t g = rest % G.g, s = rest / G.g;
    const std::int64_t r0 = S.rows * s / S.slices, r1 = S.rows * (s + 1) / S.slices;
    if (S.nv == 4)
      item<W, 4>(G, S, t, out + s * dw_floats, g, mb * S.mblock, kb * S.kblock, r0, r1);
    else
      item<W, 2>(G, S, t, out + s * dw_floats, g, mb * S.mblock, kb * S.kblock, r0, r1);
  }
  if (S.slices == 1) return;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < dw_floats; ++i) {
    float sum = partials[i];
    for (std::int64_t s = 1; s < S.slices; ++s) sum += partials[s * dw_floats + i];
    t.w[i] = sum;
  }
}

}  // namespace
}  // namespace convguard::cpu::bwdw
