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
// 48 on AVX-512); an item takes its chunk's rows in blocks of 32 steps and within a block its 32
// tiles in turn, so the block's rows are read from memory once and by the other tiles from
// cache. The tiles' lane sums wait in a buffer (48 KB on AVX-512) between blocks and are summed
// across lanes once per chunk. (Tried, no faster: items up to 96 columns of equal width, and the
// columns as the outer tile loop.)
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

// One vector step of a block: P::kPixels (or, at a row's end, fewer) consecutive output pixels
// of one row, as element offsets from the tile's dy and x for image 0 (the image is folded into
// the offsets), and the mask of the pixels it has.
struct Step {
  std::int64_t dy, x;
  std::uint32_t mask;
};

// Tile (KR output channels from k0, JR filter columns from j0) of group grp over a block's steps,
// lane sums kept in acc_store between blocks. The rows are flattened into one list of steps
// beforehand (a 64-wide row is only 4 fp32 steps), and the register loops are unrolled by
// pragma: left to GCC 12, the accumulator array stayed in memory, a store after every FMA.
template <class P, int KR, int JR>
void tile(const Args& a, std::int64_t grp, std::int64_t k0, std::int64_t j0, const Step* steps,
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
  // Each row's and column's base, so that a step's loads are base + step offset (an addressing
  // mode), not six address sums a step: those took as many instructions as the FMAs on AVX2.
  const typename P::T* dy_row[KR];
  const typename P::T* x_column[JR];
#pragma GCC unroll 8
  for (int i = 0; i < KR; ++i) dy_row[i] = dy0 + i * plane;
#pragma GCC unroll 8
  for (int j = 0; j < JR; ++j) x_column[j] = x0 + a.tap_at[j0 + j];
  for (int s = 0; s < count; ++s) {
    const std::uint32_t m = steps[s].mask;
    const std::int64_t at_dy = steps[s].dy, at_x = steps[s].x;
    typename P::Vec d[KR];
#pragma GCC unroll 8
    for (int i = 0; i < KR; ++i) d[i] = P::load(m, dy_row[i] + at_dy);
#pragma GCC unroll 8
    for (int j = 0; j < JR; ++j) {
      const typename P::Vec v = P::load(m, x_column[j] + at_x);
#pragma GCC unroll 8
      for (int i = 0; i < KR; ++i) acc[i][j] = P::multiply_add(acc[i][j], d[i], v);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < KR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < JR; ++j) P::store_sums(acc_store + (i * P::kColsJ + j) * L, acc[i][j]);
}

// Walks a chunk's output rows (flattened n, od, oh) P::kPixels pixels at a time.
template <class P>
struct StepCursor {
  const Args& a;
  std::int64_t row, last_row, at = 0;
  std::int64_t n, od, oh;
  StepCursor(const Args& args, std::int64_t first, std::int64_t last)
      : a(args), row(first), last_row(last) {
    const std::int64_t per_image = a.od * a.oh;
    n = first / per_image, od = first % per_image / a.oh, oh = first % a.oh;
  }
  // Up to kBlockSteps steps into `out`; returns how many (0: the chunk is done).
  int next_block(Step* out) {
    int count = 0;
    const std::int64_t plane = a.od * a.oh * a.ow;
    while (count < kBlockSteps && row < last_row) {
      const std::int64_t left = a.ow - at;
      out[count].dy = n * a.g * a.kg * plane + (od * a.oh + oh) * a.ow + at;
      out[count].x = n * a.g * a.x_group + od * a.x_step_d + oh * a.x_step_h + at;
      out[count].mask = left >= P::kPixels ? P::kAll : (std::uint32_t{1} << left) - 1;
      ++count;
      at += P::kPixels;
      if (at < a.ow) continue;
      at = 0, ++row;
      if (++oh < a.oh) continue;
      oh = 0;
      if (++od < a.od) continue;
      od = 0, ++n;
    }
    return count;
  }
};

using TileFn = void (*)(const Args&, std::int64_t, std::int64_t, std::int64_t, const Step*, int,
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
    Step blocks[2][kBlockSteps];  // this block's steps and the next one's
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
            std::memset(acc, 0, sizeof(float) * kLaneSumFloats);
            const std::int64_t r_end = smaller((chunk + 1) * a.rows_per_chunk, rows);
            StepCursor<P> cursor(a, chunk * a.rows_per_chunk, r_end);
            int count = cursor.next_block(blocks[0]);
            for (int b = 0; count > 0; b ^= 1) {
              const Step* steps = blocks[b];
              const int next = cursor.next_block(blocks[b ^ 1]);
              // The next block's dy lines (one per step and output channel) are prefetched into L1
              // a slice per tile: the item's kItemK dy rows (16 on AVX-512) are as many streams
              // that jump by a block, which the hardware prefetcher follows poorly. Measured in
              // convguard_bench (one call per round, caches cold): 224x224 C = 3 0.71-0.91 ->
              // 0.61-0.63 ms, batch 16 at 64x64 1.09 -> 0.83, 512x512 5.5 -> 4.2 (into L2 then);
              // into L1 rather than L2 (2026-11-28, Zen 5), batch 16 0.90 -> 0.77-0.80 ms and
              // 512x512 3.9-4.1
              // -> 3.75-3.86, the rest of the standard suite the same.
              const Step* ahead = blocks[b ^ 1];
              int t = 0;
              for (std::int64_t k = k_first; k < k_end; k += kRowsK)
                for (std::int64_t j = j_first; j < j_end; j += kColsJ, ++t) {
                  for (std::int64_t n = next * t / tiles; n < next * (t + 1) / tiles; ++n)
                    for (std::int64_t i = 0; i < k_end - k_first; ++i)
                      _mm_prefetch(reinterpret_cast<const char*>(dy + i * plane + ahead[n].dy),
                                   _MM_HINT_T0);
                  const std::int64_t kr = smaller(kRowsK, k_end - k);
                  const std::int64_t jr = smaller(kColsJ, j_end - j);
                  tile_of<P>(kr, jr)(a, grp, k, j, steps, count, acc + t * kTileFloats);
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
