// cpu:bwdw_rows's kernel (bwdw_rows_entry.hpp), generic over an element policy P: fp32 on
// AVX-512 (bwdw_rows_avx512.cpp, 16 pixels a step, FMA) and on AVX2 (bwdw_rows_avx2.cpp, 8 pixels
// a step), and bf16 (bwdw_rows_bf16_avx512.cpp, 32 pixels a step, vdpbf16ps adding a pixel pair
// per lane). Included only by files compiled with the policy's ISA flags; internal linkage, no
// library templates. The policy gives the register tile (kRowsK x kColsJ), its accumulator's
// lanes and how lane sums are kept and added.
//
// AVX-512: a register tile of 4 output channels x 6 filter columns keeps 24 vector accumulators
// of lane sums; a step loads 4 dy vectors and 6 x vectors (both contiguous along the output row,
// the last of a row masked) for 24 multiply-adds (AVX2: 3 x 4, 12 accumulators in 16
// registers). Work items are (chunk, group, 4 tiles of output channels, 8 of filter columns: 16 x
// 48 on AVX-512); an item takes its chunk's rows in blocks of at most 32 steps (as runs along
// rows: Run) and within a block its 32 tiles in turn, so the block's rows are read from memory
// once and by the other tiles from cache. The tiles' lane sums wait in a buffer (48 KB on
// AVX-512) between blocks and are summed across lanes once per chunk. (Tried, no faster: items up
// to 96 columns of equal width, and the columns as the outer tile loop.)
#pragma once

#include <immintrin.h>
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "cpu/solvers/bwdw_rows_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::bwdw_rows {
namespace {

constexpr int kTilesK = 4, kTilesJ = 8;  // tiles per work item
// A work item's output channels and filter columns, and a tile's lane sums (floats).
template <class P>
constexpr int kItemK = P::kRowsK* kTilesK;
template <class P>
constexpr int kItemJ = P::kColsJ* kTilesJ;
template <class P>
constexpr int kTileFloats = P::kRowsK* P::kColsJ* P::kLanes;
constexpr int kBlockSteps = 32;  // vector steps per block

// A run of a block: consecutive output pixels of one row, `full` whole vector steps of P::kPixels
// and then, where the row ends inside a vector, one masked step of the pixels in `tail` (0: none).
// dy and x are element offsets from the tile's dy and x for image 0 (the image is folded into
// them). Runs instead of a list of single steps: the whole steps load with the policy's all-lanes
// mask (a constant: GCC emits plain loads) and their offsets are one add a step; per-step records
// took 26-37% more time a step than the tile's FMAs need, in L1 (a microbenchmark of this loop on
// a Zen 5: 4.4-4.8 ns a step against 3.5).
struct Run {
  std::int64_t dy, x;
  std::int32_t full;
  std::uint32_t tail;
};

// Tile (KR output channels from k0, JR filter columns from j0) of group grp over a block's runs,
// lane sums kept in acc_store between blocks. The register loops are unrolled by pragma: left to
// GCC 12, the accumulator array stayed in memory, a store after every FMA.
template <class P, int KR, int JR>
void tile(const Args& a, std::int64_t grp, std::int64_t k0, std::int64_t j0, const Run* runs,
          int count, float* acc_store) {
  static_assert(kTilesK * kTilesJ * kTileFloats<P> <= kLaneSumFloats);
  constexpr int L = P::kLanes;
  typename P::Acc acc[KR][JR];
#pragma GCC unroll 8
  for (int i = 0; i < KR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < JR; ++j) acc[i][j] = P::load_sums(acc_store + (i * P::kColsJ + j) * L);
  const std::int64_t plane = a.od * a.oh * a.ow;
  const auto* dy0 = static_cast<const typename P::T*>(a.dy) + (grp * a.kg + k0) * plane;
  const auto* x0 = static_cast<const typename P::T*>(a.x) + grp * a.x_group;
  // Each row's and column's base, so that a step's loads are base + offset (an addressing mode),
  // not six address sums a step: those took as many instructions as the FMAs on AVX2.
  const typename P::T* dy_row[KR];
  const typename P::T* x_column[JR];
#pragma GCC unroll 8
  for (int i = 0; i < KR; ++i) dy_row[i] = dy0 + i * plane;
#pragma GCC unroll 8
  for (int j = 0; j < JR; ++j) x_column[j] = x0 + a.tap_at[j0 + j];
  const auto step = [&](std::uint32_t m, std::int64_t at_dy, std::int64_t at_x) {
    typename P::Vec d[KR];
#pragma GCC unroll 8
    for (int i = 0; i < KR; ++i) d[i] = P::load(m, dy_row[i] + at_dy);
#pragma GCC unroll 8
    for (int j = 0; j < JR; ++j) {
      const typename P::Vec v = P::load(m, x_column[j] + at_x);
#pragma GCC unroll 8
      for (int i = 0; i < KR; ++i) acc[i][j] = P::multiply_add(acc[i][j], d[i], v);
    }
  };
  for (int r = 0; r < count; ++r) {
    std::int64_t at_dy = runs[r].dy, at_x = runs[r].x;
    for (std::int32_t s = 0; s < runs[r].full; ++s, at_dy += P::kPixels, at_x += P::kPixels) {
      // Opaque to GCC, so that it keeps each load base + offset: else it makes a pointer per row
      // and column per run (ten on AVX-512, reloaded from the stack, 3 instructions each), which
      // costs 1-row runs more than the run saves (bf16's 32-pixel rows; driver: 16 -> 32 channels
      // at 32 x 32 0.051 -> 0.046 ms).
      asm("" : "+r"(at_dy), "+r"(at_x));
      step(P::kAll, at_dy, at_x);
    }
    if (runs[r].tail != 0) step(runs[r].tail, at_dy, at_x);
  }
#pragma GCC unroll 8
  for (int i = 0; i < KR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < JR; ++j) P::store_sums(acc_store + (i * P::kColsJ + j) * L, acc[i][j]);
}

// Walks a chunk's output rows (flattened n, od, oh) in blocks of at most kBlockSteps vector steps.
template <class P>
struct RunCursor {
  const Args& a;
  std::int64_t row, last_row, at = 0;
  std::int64_t n, od, oh;
  RunCursor(const Args& args, std::int64_t first, std::int64_t last)
      : a(args), row(first), last_row(last) {
    const std::int64_t per_image = a.od * a.oh;
    n = first / per_image, od = first % per_image / a.oh, oh = first % a.oh;
  }
  // The next block's runs into `out` and each of its steps' dy offset into `step_dy` (for the
  // prefetch); returns the runs (0: the chunk is done) and sets `steps` (0 then too).
  int next_block(Run* out, std::int64_t* step_dy, int& steps) {
    int count = 0;
    steps = 0;
    const std::int64_t plane = a.od * a.oh * a.ow;
    while (steps < kBlockSteps && row < last_row) {
      const std::int64_t left = a.ow - at, room = kBlockSteps - steps;
      Run& r = out[count++];
      r.dy = n * a.g * a.kg * plane + (od * a.oh + oh) * a.ow + at;
      r.x = n * a.g * a.x_group + od * a.x_step_d + oh * a.x_step_h + at;
      const std::int64_t whole = left / P::kPixels, rest = left % P::kPixels;
      // A row's end fits whenever its whole steps do: whole < room leaves room for the tail.
      const bool ends = whole < room || (whole == room && rest == 0);
      r.full = static_cast<std::int32_t>(ends ? whole : room);
      r.tail = ends && rest ? (std::uint32_t{1} << rest) - 1 : 0;
      const int taken = r.full + (r.tail != 0);
      for (int s = 0; s < taken; ++s) step_dy[steps + s] = r.dy + s * P::kPixels;
      steps += taken;
      if (!ends) {
        at += r.full * P::kPixels;
        continue;
      }
      at = 0, ++row;
      if (++oh < a.oh) continue;
      oh = 0;
      if (++od < a.od) continue;
      od = 0, ++n;
    }
    return count;
  }
};

using TileFn = void (*)(const Args&, std::int64_t, std::int64_t, std::int64_t, const Run*, int,
                        float*);
// The tile of kr <= KR output channels and jr <= JR filter columns: every edge shape up to the
// policy's tile, and none larger.
template <class P, int KR = P::kRowsK, int JR = P::kColsJ>
TileFn tile_of(std::int64_t kr, std::int64_t jr) {
  if constexpr (KR > 1)
    if (kr < KR) return tile_of<P, KR - 1, JR>(kr, jr);
  if constexpr (JR > 1)
    if (jr < JR) return tile_of<P, KR, JR - 1>(kr, jr);
  return &tile<P, KR, JR>;
}

inline std::int64_t smaller(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

template <class P>
void run(const Args& a) {
  const std::int64_t rows = a.n * a.od * a.oh;
  const std::int64_t chunks = (rows + a.rows_per_chunk - 1) / a.rows_per_chunk;
  constexpr int kRowsK = P::kRowsK, kColsJ = P::kColsJ, kItemK = bwdw_rows::kItemK<P>;
  constexpr int kItemJ = bwdw_rows::kItemJ<P>, kTileFloats = bwdw_rows::kTileFloats<P>;
  const std::int64_t kb = (a.kg + kItemK - 1) / kItemK, jb = (a.columns + kItemJ - 1) / kItemJ;
#pragma omp parallel
  {
    float* acc = a.lane_sums + omp_get_thread_num() * kLaneSumFloats;
    Run blocks[2][kBlockSteps];                // this block's runs and the next one's
    std::int64_t step_dy[2][kBlockSteps];      // their steps' dy offsets
#pragma omp for schedule(dynamic) collapse(4)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk)
      for (std::int64_t grp = 0; grp < a.g; ++grp)
        for (std::int64_t kblk = 0; kblk < kb; ++kblk)
          for (std::int64_t jblk = 0; jblk < jb; ++jblk) {
            const std::int64_t k_first = kblk * kItemK, k_end = smaller(k_first + kItemK, a.kg);
            const std::int64_t j_first = jblk * kItemJ;
            const std::int64_t j_end = smaller(j_first + kItemJ, a.columns);
            const std::int64_t tiles =
                (k_end - k_first + kRowsK - 1) / kRowsK * ((j_end - j_first + kColsJ - 1) / kColsJ);
            const std::int64_t plane = a.od * a.oh * a.ow;
            const auto* dy =
                static_cast<const typename P::T*>(a.dy) + (grp * a.kg + k_first) * plane;
            std::memset(acc, 0, sizeof(float) * static_cast<std::size_t>(tiles * kTileFloats));
            const std::int64_t r_end = smaller((chunk + 1) * a.rows_per_chunk, rows);
            RunCursor<P> cursor(a, chunk * a.rows_per_chunk, r_end);
            int steps_next = 0;
            int count = cursor.next_block(blocks[0], step_dy[0], steps_next);
            for (int b = 0; count > 0; b ^= 1) {
              const Run* runs = blocks[b];
              const int next = cursor.next_block(blocks[b ^ 1], step_dy[b ^ 1], steps_next);
              // The next block's dy lines (one per step and output channel) are prefetched into L1
              // a slice per tile: the item's kItemK dy rows (16 on AVX-512) are as many streams
              // that jump by a block, which the hardware prefetcher follows poorly. Measured in
              // convguard_bench (one call per round, caches cold): 224x224 C = 3 0.71-0.91 ->
              // 0.61-0.63 ms, batch 16 at 64x64 1.09 -> 0.83, 512x512 5.5 -> 4.2 (into L2 then);
              // into L1 rather than L2 (2026-11-28, Zen 5), batch 16 0.90 -> 0.77-0.80 ms and
              // 512x512 3.9-4.1 -> 3.75-3.86, the rest of the standard suite the same.
              const std::int64_t* ahead = step_dy[b ^ 1];
              int t = 0;
              for (std::int64_t k = k_first; k < k_end; k += kRowsK)
                for (std::int64_t j = j_first; j < j_end; j += kColsJ, ++t) {
                  for (std::int64_t n = steps_next * t / tiles; n < steps_next * (t + 1) / tiles;
                       ++n)
                    for (std::int64_t i = 0; i < k_end - k_first; ++i)
                      _mm_prefetch(reinterpret_cast<const char*>(dy + i * plane + ahead[n]),
                                   _MM_HINT_T0);
                  const std::int64_t kr = smaller(kRowsK, k_end - k);
                  const std::int64_t jr = smaller(kColsJ, j_end - j);
                  tile_of<P>(kr, jr)(a, grp, k, j, runs, count, acc + t * kTileFloats);
                }
              count = next;
            }
            // Each output's lanes, summed once per chunk.
            int t = 0;
            for (std::int64_t k = k_first; k < k_end; k += kRowsK)
              for (std::int64_t j = j_first; j < j_end; j += kColsJ, ++t)
                for (int i = 0; i < kRowsK && k + i < k_end; ++i)
                  for (int jj = 0; jj < kColsJ && j + jj < j_end; ++jj)
                    a.partial[((chunk * a.g + grp) * a.kg + k + i) * a.columns + j + jj] =
                        P::add_lanes(acc + t * kTileFloats + (i * kColsJ + jj) * P::kLanes);
          }
  }
}

}  // namespace
}  // namespace convguard::cpu::bwdw_rows
