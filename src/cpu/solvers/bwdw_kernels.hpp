// Kernels of cpu:bwdw, generic over the vector width W (floats). Included only by the per-ISA
// files bwdw_avx512.cpp / bwdw_avx2.cpp, compiled with that ISA's flags (a target attribute
// would not reach the loops OpenMP outlines); internal linkage only (see simd.hpp).
//
// dW[g][k][u][m] = sum over output pixels p of x[p, u][m] * dy[p][g*Kg + k], on channels-last x
// (zero padding materialised, so a window never leaves the buffer) and channels-last dy; u is an
// outer tap, m the contiguous span of x that pixel p multiplies at u (bwdw_entry.hpp). A register
// tile holds 2 vectors of m x tile_k output channels; per pixel it loads 2 vectors of x and
// broadcasts tile_k values of dy, so it needs no packing and no pointer tables: consecutive
// pixels of an output row are sw*C floats apart in x and K apart in dy.
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

// Pixels per chunk: the unit over which a tile keeps its sums in registers before adding them to
// the item's dW block (x and dy of a chunk stay in L2 while every tile of the item passes).
inline constexpr std::int64_t kChunkPixels = 256;
inline constexpr std::int64_t kMaxChunkRows = 256;

// The pixels of one chunk: `rows` output rows of `ow` pixels each; row r's first pixel reads x
// at x_row[r] (+ the tile's tap and m offset) and dy at (r * ow) * dy_step from the chunk's dy.
struct Chunk {
  const std::int64_t* x_row;
  std::int64_t rows, ow;
  std::int64_t x_step, dy_step;  // floats between neighbouring pixels of a row (sw*C; K)
};

// The running sums of one tile: dst rows are output channels (ld apart), 2W floats of m each.
template <int W>
struct Tile {
  using vf = typename Vec<W>::type;
  static constexpr int kK = tile_k(W);
  vf lo[kK], hi[kK];

  // Starts from zero on the item's first chunk (dW is never read before it is written), else
  // from what the previous chunk stored.
  [[gnu::always_inline]] inline void begin(const float* dst, std::int64_t ld, int mvalid,
                                           int kvalid, bool first) {
    for (int j = 0; j < kK; ++j) {
      lo[j] = hi[j] = vf{};
      if (first || j >= kvalid) continue;
      float tmp[2 * W] = {};
      std::memcpy(tmp, dst + j * ld, static_cast<std::size_t>(mvalid) * sizeof(float));
      lo[j] = load<W>(tmp);
      hi[j] = load<W>(tmp + W);
    }
  }

  [[gnu::always_inline]] inline void end(float* dst, std::int64_t ld, int mvalid,
                                         int kvalid) const {
    for (int j = 0; j < kvalid; ++j) {
      float tmp[2 * W];
      std::memcpy(tmp, &lo[j], sizeof(vf));
      std::memcpy(tmp + W, &hi[j], sizeof(vf));
      std::memcpy(dst + j * ld, tmp, static_cast<std::size_t>(mvalid) * sizeof(float));
    }
  }

  // x: the chunk's x at this tile's tap and m; dy: the chunk's dy at this tile's first channel.
  // The 2W values of m read past the span's end when mvalid < 2W (into the next pixel or the
  // staged buffer's slack): those lanes are never stored. A partial tile of k repeats its last
  // channel instead of reading past dy, which may be the caller's buffer.
  template <bool FullK>
  [[gnu::always_inline]] inline void accumulate(const Chunk& c, const float* x, const float* dy,
                                                int kvalid) {
    int kofs[kK];
    for (int j = 0; j < kK; ++j) kofs[j] = FullK ? j : (j < kvalid ? j : kvalid - 1);
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const float* xp = x + c.x_row[r];
      const float* yp = dy + r * c.ow * c.dy_step;
      for (std::int64_t o = 0; o < c.ow; ++o, xp += c.x_step, yp += c.dy_step) {
        const vf x0 = load<W>(xp), x1 = load<W>(xp + W);
        for (int j = 0; j < kK; ++j) {
          const vf b = broadcast<W>(yp + kofs[j]);
          lo[j] += x0 * b;
          hi[j] += x1 * b;
        }
      }
    }
  }
};

// One work item: group g, outer tap u, the m block from m0 and the k block from k0, over output
// rows [r_begin, r_end), into dst (the [K][outer][m] sums of this slice).
template <int W>
void item(const Geometry& G, const Shape& S, const StagedTensors& t, float* dst, std::int64_t g,
          std::int64_t u, std::int64_t m0, std::int64_t k0, std::int64_t r_begin,
          std::int64_t r_end) {
  constexpr int kK = tile_k(W);
  const Sizes5& xs = t.xs;
  const std::int64_t C = G.c(), K = G.k();
  // Where tap u's window starts relative to the padded window origin of each pixel.
  std::int64_t a, b, e = 0;
  if (S.wide) {
    a = u / G.kh, b = u % G.kh;
  } else {
    a = u / (G.kh * G.kw), b = (u / G.kw) % G.kh, e = u % G.kw;
  }
  const float* x = t.x + ((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C + g * G.cg + m0;
  const std::int64_t m_end = lesser(m0 + S.mblock, S.m), k_end = lesser(k0 + S.kblock, G.kg);
  const std::int64_t ld = S.outer * S.m;  // between output channels in dst
  float* out = dst + (g * G.kg * S.outer + u) * S.m;
  std::int64_t x_row[kMaxChunkRows];
  const std::int64_t chunk_rows = lesser(kMaxChunkRows, (kChunkPixels + G.ow - 1) / G.ow);
  for (std::int64_t r0 = r_begin; r0 < r_end; r0 += chunk_rows) {
    const Chunk c{x_row, lesser(chunk_rows, r_end - r0), G.ow, G.sw * C, K};
    for (std::int64_t i = 0; i < c.rows; ++i) {
      const std::int64_t r = r0 + i, oh = r % G.oh, od = (r / G.oh) % G.od, n = r / (G.oh * G.od);
      x_row[i] = ((n * xs.d + od * G.sd) * xs.h + oh * G.sh) * xs.w * C;
    }
    const float* dy = t.y + r0 * G.ow * K + g * G.kg;
    for (std::int64_t k = k0; k < k_end; k += kK) {
      const int kvalid = static_cast<int>(lesser(kK, k_end - k));
      for (std::int64_t m = m0; m < m_end; m += 2 * W) {
        const int mvalid = static_cast<int>(lesser(2 * W, m_end - m));
        float* d = out + k * ld + m;
        Tile<W> tile;
        tile.begin(d, ld, mvalid, kvalid, r0 == r_begin);
        if (kvalid == kK)
          tile.template accumulate<true>(c, x + (m - m0), dy + k, kvalid);
        else
          tile.template accumulate<false>(c, x + (m - m0), dy + k, kvalid);
        tile.end(d, ld, mvalid, kvalid);
      }
    }
  }
}

// The entry point each per-ISA file defines under its own name. Work items (and row slices) are
// independent and each is summed in one fixed order, so the result does not depend on the
// thread count or the schedule; slices' partial sums are then added in slice order.
template <int W>
void run(const Geometry& G, const StagedTensors& t, float* partials) {
  const Shape S = shape(G, W);
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
    const std::int64_t u = rest % S.outer;
    rest /= S.outer;
    const std::int64_t g = rest % G.g, s = rest / G.g;
    item<W>(G, S, t, out + s * dw_floats, g, u, mb * S.mblock, kb * S.kblock, S.rows * s / S.slices,
            S.rows * (s + 1) / S.slices);
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
