// Entry points of cpu:bwdw's per-ISA kernel files (see bwdw_kernels.hpp) and the work shape
// they share with bwdw.cpp, which sizes the partial-sum scratch from it.
#pragma once

#include <algorithm>

#include "core/geometry.hpp"
#include "cpu/staged_solver.hpp"

namespace convguard::cpu::bwdw {

using detail::Geometry;

// dW seen as per group a matrix [Kg][outer][m]: the vector dimension m runs over the x values one
// output pixel multiplies, contiguous in channels-last x. With one group and dense width taps the
// kw taps x Cg channels of a window row are one contiguous span ("wide": m = e*Cg + c, so the
// C = 3 first layer fills 21 lanes, not 3); otherwise m = c and every tap is an outer tap.
// [Kg][outer][m] is exactly the [K][taps][Cg] (channels-last) filter either way.
// Pixels per chunk: the unit over which a tile keeps its sums in registers before adding them to
// the item's dW block (x and dy of a chunk stay in L2 while every tile of the item passes).
// 256 against 64: 1.05-1.35x on five ResNet-50 layers (AMD EPYC, 2 threads, a shared machine).
// Up to kWholeChunk pixels are one chunk.
inline constexpr std::int64_t kChunkPixels = 256, kWholeChunk = 512, kMaxChunkRows = 512;

// The caller's layouts that cpu:bwdw can compute on directly.
struct CallerLayout {
  bool activations_first = false;  // x not channels-last
  bool filter_first = false;       // dW [K][Cg][taps]
};

struct Shape {
  bool wide = false;
  // For channels-first callers (staging channels-last cost up to 2x the convolution): dy is read
  // channels-first always (the tiles take it packed per chunk anyway), and so is a large x with
  // 1x1 filters (each chunk's x is then packed pixel-major too).
  bool channels_first = false;  // x
  bool dy_channels_first = false;
  // dW stored straight into a channels-first filter (each tile's m scattered over taps): where
  // an item is one chunk, so no tile reads its sums back, and pixels are few. Else dW is
  // [K][taps][Cg] and staging transposes it: at batch 1 that copy took longer than the
  // 512-channel 3x3 convolution (0.26x of oneDNN, 0.38x scattered), at batch 8 (392 pixels) the
  // scattered stores were the slower (0.64x against 0.70x).
  bool w_channels_first = false;
  std::int64_t chunk_rows = 0;
  std::int64_t outer = 0, m = 0;
  int nv = 2;                           // vectors of m per register tile
  std::int64_t mblock = 0, kblock = 0;  // floats of m, values of k per work item
  std::int64_t items = 0;               // (group, m block, k block) per slice
  std::int64_t rows = 0;                // output rows (n, od, oh) reduced over
  std::int64_t slices = 1;              // row ranges with their own partial sums (> 1: scratch)
};

// Output channels per register tile of nv vectors of m: 24 accumulators of AVX-512's 32
// registers, 12 of AVX2's 16.
static constexpr int tile_k(int lanes, int nv) {
  return (lanes == 16 ? 24 : 12) / nv;
}

// static: each per-ISA file gets its own copy (no shared inline symbol across ISAs).
static inline Shape shape(const Geometry& G, int lanes, CallerLayout caller) {
  const bool channels_first = caller.activations_first;
  constexpr std::int64_t kWantItems = 8, kMaxSlices = 16, kFewPixels = 4096;
  constexpr std::int64_t kMaxKBlockChannelsFirst = 2048;
  Shape s;
  // x channels-first for every 1x1 filter: packing each chunk on the fly beat staging x
  // channels-last (a memory-bound transpose, 2x the convolution at K = 64) at every K measured,
  // up to K = 2048 (1.7-2x faster there than staging; AMD EPYC, 2 threads).
  s.channels_first = channels_first && G.taps() == 1;
  s.dy_channels_first = channels_first;
  s.wide = G.g == 1 && G.dw == 1;
  s.outer = s.wide ? G.kd * G.kh : G.taps();
  s.m = s.wide ? G.kw * G.cg : G.cg;
  // Items as large as the caches allow, so x and dy come from memory about once (1x1 layers are
  // bound by memory bandwidth: 128-wide m blocks read dy once per block and ran 3x slower): an
  // item takes every outer tap, up to 1024 sums per output channel (outer taps x m) and 16 tiles
  // of k, so its dW block stays in L2 and a 256-pixel chunk of x and dy mostly within it.
  // Parallelism then comes from smaller blocks where pixels are few, else from row slices.
  //
  // 4 vectors x 6 channels need 10 loads per 24 FMAs, 2 x 12 need 14 (the load ports limited
  // it); 4 only where m fills them (every ResNet-50 layer but the first).
  s.nv = lanes == 16 && s.m % (4 * lanes) == 0 ? 4 : 2;
  const std::int64_t mtile = s.nv * lanes, ktile = tile_k(lanes, s.nv);
  const std::int64_t mtiles = std::max<std::int64_t>(1, 1024 / (s.outer * mtile));
  s.mblock = std::min<std::int64_t>((s.m + mtile - 1) / mtile, mtiles) * mtile;
  // Channels-first x: one k block takes every output channel (each k block packs x again), and
  // the m block is what keeps the item's dW block within 512 KB.
  const std::int64_t kmax = s.channels_first ? (kMaxKBlockChannelsFirst + ktile - 1) / ktile : 16;
  s.kblock = std::min<std::int64_t>((G.kg + ktile - 1) / ktile, kmax) * ktile;
  if (s.channels_first)
    s.mblock = std::min(s.mblock, std::max<std::int64_t>(1, 131072 / s.kblock / mtile) * mtile);
  auto count = [&] {
    s.items = G.g * ((s.m + s.mblock - 1) / s.mblock) * ((G.kg + s.kblock - 1) / s.kblock);
  };
  count();
  // Few pixels (late layers, batch 1): x and dy stay in cache, so smaller blocks cost no memory
  // traffic, and they save the partial sums of a large dW that row slices would need.
  if (G.n * G.out_spatial() <= kFewPixels) {
    while (s.items < kWantItems && s.kblock > 2 * ktile && !s.channels_first) {
      s.kblock = ((s.kblock / ktile + 1) / 2) * ktile;
      count();
    }
    while (s.items < kWantItems && s.mblock > mtile) {
      s.mblock = ((s.mblock / mtile + 1) / 2) * mtile;
      count();
    }
  }
  s.rows = G.n * G.od * G.oh;
  // Too few items to keep the threads busy (small dW, e.g. few channels and taps): split the
  // reduction over rows too, each slice into its own dW-sized partial sum, added in slice order
  // afterwards. Depends on the problem only, so workspace and result never depend on threads.
  if (s.items < kWantItems) {
    const std::int64_t want = (2 * kWantItems + s.items - 1) / s.items;
    s.slices = want < kMaxSlices ? want : kMaxSlices;
    if (s.slices > s.rows) s.slices = s.rows;
  }
  const std::int64_t pixels = G.n * G.out_spatial();
  s.chunk_rows = pixels <= kWholeChunk ? s.rows : (kChunkPixels + G.ow - 1) / G.ow;
  s.chunk_rows = std::min(s.chunk_rows, kMaxChunkRows);
  s.w_channels_first = caller.filter_first && G.taps() > 1 && s.slices == 1 &&
                       s.chunk_rows >= s.rows && pixels <= kChunkPixels;
  return s;
}

// w in t: dW, [K][taps][Cg] fp32 ([K][Cg][taps] where shape().w_channels_first); partials: slices x
// dW floats when shape().slices > 1.
void run_avx512(const Geometry& G, const StagedTensors& t, float* partials, CallerLayout caller);
void run_avx2(const Geometry& G, const StagedTensors& t, float* partials, CallerLayout caller);

}  // namespace convguard::cpu::bwdw
