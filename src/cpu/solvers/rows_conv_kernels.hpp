// cpu:bwdd_rows's kernel (rows_conv_entry.hpp), generic over an element policy P: fp32 on
// AVX-512 (rows_conv_avx512.cpp) and AVX2 (rows_conv_avx2.cpp), and bf16
// (rows_conv_bf16_avx512.cpp: a window word holds two input channels of one pixel and vdpbf16ps
// adds both products to a lane). In the Args' backward-data names, forward's output y is "dx" and
// its input x is "dy" (rows_conv.cpp: RowsView). Included only by files compiled with the policy's
// ISA flags; internal linkage, no library templates.
//
// A policy gives its vector width (kLanes pixels), its accumulator type and the register tile's
// vectors per channel count (tile_vectors: about as many accumulators as the register file holds
// beside the loaded vectors and a broadcast; 32 registers on AVX-512, 16 on AVX2).
//
// A register tile of MR dx channels x NV vectors of kLanes pixels along dx rows (AVX-512: 3 x 8
// for a first layer's 3 channels, 6 x 4 from 6 channels up: 24 accumulators) runs the whole
// reduction: per
// reduction row j it loads NV dy vectors (contiguous in the padded dy row, or with a forward
// stride in its column phase) and broadcasts MR filter words. Reads may run past a window row or
// phase (into the next one, or the window's slack):
// those lanes belong to pixels beyond dx's row and are never stored. Work items are (image,
// group, depth slice, 8 dx rows, and on small images a slice of the channel blocks: for_each_item):
// an item copies the padded dy rows its dx rows read into its thread's window, then runs its
// channel blocks over them. Each dx element is one tile's, so the result does not depend on the
// thread count.
#pragma once

#include <immintrin.h>
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "cpu/solvers/rows_conv_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::rows_conv {
namespace {

using simd::lesser;

// tile_vectors for 32 vector registers (the AVX-512 policies): MR x NV accumulators (24 from 4
// channels up), NV loaded vectors and a broadcast.
constexpr int tile_vectors_32_registers(int mr) {
  return mr <= 3 ? 8 : mr == 4 ? 6 : 4;
}

// The kLanes pixels from flat position q of an item's padded rows (row q / padded_w, column q %
// padded_w; columns from iw on are no pixel's, nor positions from `end` on) stored to the item's
// dx rows (iw apart, from dx): one masked store per row the vector reaches, its lanes shifted by
// the base address (a masked store touches none of the other lanes' addresses).
template <class P>
void store_flat(const Args& a, typename P::T* dx, std::int64_t q, std::int64_t end,
                typename P::Acc v) {
  constexpr int L = P::kLanes;
  const std::int64_t pitch = a.padded_w;
  std::int64_t row = q / pitch, col = q % pitch;
  if (col + L <= a.iw && q + L <= end) {
    P::store_whole(dx + row * a.iw + col, a.stream_out, v);
    return;
  }
  for (int lane = 0; lane < L && q + lane < end;) {
    if (col >= a.iw) {  // the padded tail: skip to the next row
      lane += static_cast<int>(pitch - col), ++row, col = 0;
      continue;
    }
    const int n = static_cast<int>(lesser(lesser(a.iw - col, L - lane), end - q - lane));
#ifdef __SANITIZE_ADDRESS__
    // ASan does not see masked stores (GCC emits them as builtins it leaves alone): in sanitized
    // builds each run is checked against the item's rows here instead.
    if (col < 0 || col + n > a.iw || row * pitch + col + n > end) __builtin_trap();
#endif
    const auto to = reinterpret_cast<std::uintptr_t>(dx + row * a.iw + col) -
                    static_cast<std::uintptr_t>(lane) * sizeof(typename P::T);
    P::store_part(reinterpret_cast<typename P::T*>(to), lane, n, v);
    lane += n, col += n;
  }
}

// MR channels x R dx rows x V vectors of kLanes pixels from pixel at0 of each row; `last` is the
// last vector's pixels (kLanes but at a row's end), `vectors` how many of the V a row has, and
// `rows` how many of the R rows exist (the others repeat the last and are not stored). Narrow
// rows take several rows per tile: a 32-wide first layer fills 4 rows x 2 vectors, not 2 of 8.
// Flat (R = 1): at0 is a flat position of the item's padded rows (flat_of), and each vector's
// pixels are stored by store_flat; `rows` is then the item's dx rows.
template <class P, int MR, int R, int V, bool Flat = false>
void tile(const Args& a, const typename P::Word* dy, const typename P::Word* w, typename P::T* dx,
          std::int64_t plane, std::int64_t at0, int vectors, int last, int rows) {
  static_assert(!Flat || R == 1);
  constexpr int L = P::kLanes;
  typename P::Acc acc[MR][R * V];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int v = 0; v < R * V; ++v) acc[m][v] = P::zero();
  std::int64_t row_at[R];
  for (int i = 0; i < R; ++i)
    row_at[i] = Flat ? at0 : (i < rows ? i : rows - 1) * a.row_step() + at0;
  for (std::int64_t j = 0; j < a.depth; ++j) {
    const typename P::Word* tap = dy + a.tap_at[j];
    const typename P::Word* wj = w + j * kBlockChannels;
    typename P::Vec d[R * V];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) d[i * V + v] = P::load(tap + row_at[i] + v * L);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) {
      const typename P::Vec s = P::broadcast(wj + m);
#pragma GCC unroll 8
      for (int v = 0; v < R * V; ++v) acc[m][v] = P::multiply_add(acc[m][v], s, d[v]);
    }
  }
  if constexpr (Flat) {
    const std::int64_t end = (rows - 1) * a.padded_w + a.iw;
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v)
        if (v < vectors) store_flat<P>(a, dx + m * plane, at0 + v * L, end, acc[m][v]);
    return;
  }
  // Rows bounded by R, so that every accumulator index is a constant once unrolled: a runtime
  // bound made GCC keep the whole tile in memory, storing each accumulator after its FMA (AVX2 on
  // AMD Zen 1, one 128-bit store a cycle: 1.5x slower).
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        if (i >= rows) break;
        typename P::T* to = dx + m * plane + i * a.iw + at0 + v * L;
        if (v < vectors - 1 || (v == vectors - 1 && last == L))
          P::store_whole(to, a.stream_out, acc[m][i * V + v]);
        else if (v == vectors - 1)
          P::store_part(to, 0, last, acc[m][i * V + v]);
      }
}

// A single row's last tile of `vectors` < V vectors, run by the tile of exactly that many: a
// 44-wide row is 3 vectors, and computing a 4th that is never stored cost a quarter of the FMAs.
template <class P, int MR, int V, bool Flat = false>
void short_tile(const Args& a, const typename P::Word* dy, const typename P::Word* w,
                typename P::T* dx, std::int64_t plane, std::int64_t at0, int vectors, int last,
                int rows = 1) {
  if constexpr (V > 1) {
    if (vectors < V - 1)
      return short_tile<P, MR, V - 1, Flat>(a, dy, w, dx, plane, at0, vectors, last, rows);
    tile<P, MR, 1, V - 1, Flat>(a, dy, w, dx, plane, at0, vectors, last, rows);
  }
}

// `rows` (at most R) consecutive dx rows' pixels for MR channels, V vectors at a time.
template <class P, int MR, int R, int V>
void rows_of(const Args& a, const typename P::Word* dy, const typename P::Word* w,
             typename P::T* dx, std::int64_t plane, int rows) {
  constexpr int L = P::kLanes;
  for (std::int64_t at = 0; at < a.iw; at += V * L) {
    const std::int64_t left = a.iw - at;
    const int vectors = static_cast<int>(left >= V * L ? V : (left + L - 1) / L);
    const int last = static_cast<int>(lesser(left - (vectors - 1) * L, L));
    if (R == 1 && vectors < V)
      short_tile<P, MR, V>(a, dy, w, dx, plane, at, vectors, last);
    else
      tile<P, MR, R, V>(a, dy, w, dx, plane, at, vectors, last, rows);
  }
}

// Flat: the item's `rows` dx rows as one run of flat positions over its padded rows (a row's
// padded tail computed and never stored), V vectors at a time: a 7-wide row (padded to 9) fills
// 7 of every 9 lanes, not 7 of 16.
template <class P, int MR, int V>
void flat_of(const Args& a, const typename P::Word* dy, const typename P::Word* w,
             typename P::T* dx, std::int64_t plane, int rows) {
  constexpr int L = P::kLanes;
  const std::int64_t end = (rows - 1) * a.padded_w + a.iw;
  for (std::int64_t at = 0; at < end; at += V * L) {
    const int vectors = static_cast<int>(lesser(V, (end - at + L - 1) / L));
    if (vectors < V)
      short_tile<P, MR, V, true>(a, dy, w, dx, plane, at, vectors, 0, rows);
    else
      tile<P, MR, 1, V, true>(a, dy, w, dx, plane, at, vectors, 0, rows);
  }
}

template <class P>
struct Shape {
  void (*fn)(const Args&, const typename P::Word*, const typename P::Word*, typename P::T*,
             std::int64_t, int);
  int rows;  // R
};
// Rows of v vectors, NV vectors a tile: the narrowest V >= v that leaves two or more rows a tile
// (NV / V rows of V vectors), else rows of NV vectors one at a time (a row's last tile short).
template <class P, int MR, int NV, int V = 1>
Shape<P> rows_shape(std::int64_t v) {
  if constexpr (V > NV / 2) {
    return {&rows_of<P, MR, 1, NV>, 1};
  } else {
    if (v <= V) return {&rows_of<P, MR, NV / V, V>, NV / V};
    return rows_shape<P, MR, NV, V + 1>(v);
  }
}
// The tile for MR channels and rows of `width` pixels: the policy's tile_vectors(MR) vectors, as
// many whole rows as fit when a row is narrower than the tile.
template <class P, int MR>
Shape<P> shape_for(std::int64_t width, bool flat) {
  constexpr int NV = P::tile_vectors(MR);
  if (flat) return {&flat_of<P, MR, NV>, kRowsPerItem};
  return rows_shape<P, MR, NV>((width + P::kLanes - 1) / P::kLanes);
}
// Rows flattened (flat_of) where that fills far more lanes than row-by-row tiles do: a row of iw
// pixels fills iw of every padded_w flat lanes against iw of every L * ceil(iw / L). A flat
// vector that crosses a row end takes two or three masked stores, so it must fill 20% more lanes
// (measured, driver, AMD Zen 5: 7x7 512 -> 512 bf16 4.9 -> 2.8 ms; 56x56 and 28x28, 10% and 7%
// more lanes, unchanged; a 44x44 C = 3 first layer, 4% more, 40% slower). L is the policy's lanes;
// the 20% was measured on AVX-512 only and is applied to AVX2's 8 lanes as it is.
template <class P>
bool flattens(const Args& a) {
  constexpr int L = P::kLanes;
  if (a.sh > 1 || a.sw > 1) return false;  // an item's rows are then no run of window words
  const double by_row = static_cast<double>(a.iw) / static_cast<double>((a.iw + L - 1) / L * L);
  const double flat = static_cast<double>(a.iw) / static_cast<double>(a.padded_w);
  return a.padded_w >= a.iw && flat > 1.2 * by_row;
}
// flat: the item's rows as one flat run (flattens()), whatever the width.
template <class P>
Shape<P> shape_for(int mr, std::int64_t width, bool flat) {
  switch (mr) {
    case 1:
      return shape_for<P, 1>(width, flat);
    case 2:
      return shape_for<P, 2>(width, flat);
    case 3:
      return shape_for<P, 3>(width, flat);
    case 4:
      return shape_for<P, 4>(width, flat);
    case 5:
      return shape_for<P, 5>(width, flat);
    default:
      return shape_for<P, 6>(width, flat);
  }
}

// Input row positions [0, count) of the dy channels `from` (P::kPerWord of them, bf16 pairs) into
// a padded row of a.padded_w words: `left` words of zeros, the row, zeros to the end. The input's
// columns land at [left, left + copy): a begin padding wider than the row (forward) leaves
// nothing, and an end padding below zero (forward) cuts the input's last columns.
template <class P>
void pad_row(const Args& a, const typename P::T* const* from, typename P::Word* to) {
  const std::int64_t pitch = a.padded_w, left = a.top[2] < pitch ? a.top[2] : pitch;
  const std::int64_t room = pitch - left, copy = a.ow < room ? a.ow : room;
  std::memset(to, 0, sizeof(*to) * left);
  P::interleave(from, copy, to + left);
  std::memset(to + left + copy, 0, sizeof(*to) * (pitch - left - copy));
}

// The padded dy rows that dx rows [h0, h0 + kRowsPerItem) of depth slice d read, for every k of
// group grp of image n: plane (k, kd'), row wr is padded dy's plane d * sd + kd' * dd, row h0 * sh
// + wr; with column phases (sw > 1) each row is padded in `row` first, then split into them.
template <class P>
void fill_window(const Args& a, std::int64_t n, std::int64_t grp, std::int64_t d, std::int64_t h0,
                 typename P::Word* window, typename P::Word* row) {
  const std::int64_t pitch = a.padded_w;
  const auto* dy = static_cast<const typename P::T*>(a.dy);
  // Window planes of P::kPerWord dy channels each (bf16: a channel pair per 32-bit word).
  const std::int64_t planes = (a.kg + P::kPerWord - 1) / P::kPerWord;
  for (std::int64_t k2 = 0; k2 < planes; ++k2)
    for (std::int64_t kd = 0; kd < a.kd; ++kd)
      for (std::int64_t wr = 0; wr < a.window_rows; ++wr) {
        typename P::Word* to = window + ((k2 * a.kd + kd) * a.window_rows + wr) * pitch;
        const std::int64_t od = d * a.sd + kd * a.dd - a.top[0], oh = h0 * a.sh + wr - a.top[1];
        if (od < 0 || od >= a.od || oh < 0 || oh >= a.oh) {
          std::memset(to, 0, sizeof(*to) * pitch);
          continue;
        }
        const typename P::T* from[P::kPerWord];
        for (int e = 0; e < P::kPerWord; ++e) {
          const std::int64_t k = k2 * P::kPerWord + e;
          from[e] = k < a.kg
                        ? dy + (((n * a.g + grp) * a.kg + k) * a.od + od) * a.oh * a.ow + oh * a.ow
                        : nullptr;
        }
        if (a.sw == 1) {
          pad_row<P>(a, from, to);
          continue;
        }
        pad_row<P>(a, from, row);
        const std::int64_t phase_w = a.phase_w();
        for (std::int64_t p = 0; p < a.sw; ++p)
          for (std::int64_t t = 0; t < phase_w; ++t) to[p * phase_w + t] = row[t * a.sw + p];
      }
  // The slack that vector reads past the last row touch (lanes never stored), zeroed so that
  // nothing reads memory the solver did not write.
  std::memset(window + a.window_floats(), 0, sizeof(*window) * kWindowSlack);
}

// One phase of strided backward-data (Phase) for the mr channels of filter block `block` (group x
// blocks + block in the group) over the item's window: its rows from phase row i0 (at most
// kRowsPerItem) into `out`, kRowsPerItem rows of ph.ow elements per channel. A phase no tap reaches, or whose pixels the item does not have,
// computes nothing (interleave_phases writes the zeros).
template <class P>
void run_phase(const Args& a, const Phase& ph, std::int64_t block, int mr, std::int64_t d,
               std::int64_t i0, const typename P::Word* window, typename P::T* out) {
  if (ph.depth == 0 || d >= ph.od || i0 >= ph.oh || ph.ow == 0) return;
  Args pa = a;  // the phase's tiles: its width, reduction rows and filter, into `out`
  pa.iw = ph.ow, pa.depth = ph.depth, pa.tap_at = ph.tap_at, pa.stream_out = false;
  const auto* w = static_cast<const typename P::Word*>(ph.w) + block * ph.depth * kBlockChannels;
  const Shape<P> shape = shape_for<P>(mr, ph.ow, flattens<P>(pa));
  const std::int64_t rows = lesser(kRowsPerItem, ph.oh - i0);
  for (std::int64_t h = 0; h < rows; h += shape.rows)
    shape.fn(pa, window + h * a.padded_w, w, out + h * ph.ow, kRowsPerItem * ph.ow,
             static_cast<int>(lesser(rows - h, shape.rows)));
}

// A dx row of a.iw pixels from its two column phases (stride 2): even[j] at 2 j, odd[j] at 2 j +
// 1, whole vectors by the policy's zip2 where both phases have kLanes more pixels, the rest one by
// one (the odd phase is a pixel shorter when the row's width is odd).
template <class P>
void zip_pair(const Args& a, const typename P::T* even, const typename P::T* odd,
              typename P::T* to) {
  constexpr int L = P::kLanes;
  const std::int64_t odd_w = a.iw / 2;
  std::int64_t j = 0;
  for (; j + L <= odd_w; j += L) P::zip2(even + j, odd + j, to + 2 * j, a.stream_out);
  for (; 2 * j < a.iw; ++j) {
    to[2 * j] = even[j];
    if (2 * j + 1 < a.iw) to[2 * j + 1] = odd[j];
  }
}

// The item's dx rows of channels [c0, c0 + mr) from the phase outputs (run_phase): dx pixel
// (qd + sd d, qh + sh (i0 + r), qw + sw j) is phase (qd, qh, qw)'s (d, i0 + r, j). Every dx element
// of the item is written once, zeros where the phase has no tap.
template <class P>
void interleave_phases(const Args& a, const typename P::T* out, typename P::T* dx,
                       std::int64_t plane, int mr, std::int64_t d, std::int64_t i0) {
  using T = typename P::T;
  const std::int64_t sd = a.dx_stride[0], sh = a.dx_stride[1], sw = a.dx_stride[2];
  const std::int64_t per_phase = kBlockChannels * kRowsPerItem * a.phases[0].ow;
  for (int m = 0; m < mr; ++m)
    for (std::int64_t qd = 0; qd < sd; ++qd)
      for (std::int64_t qh = 0; qh < sh; ++qh) {
        const Phase& rows_of_phase = a.phases[(qd * sh + qh) * sw];
        if (d >= rows_of_phase.od) continue;
        const std::int64_t rows = lesser(kRowsPerItem, rows_of_phase.oh - i0);
        for (std::int64_t r = 0; r < rows; ++r) {
          T* to = dx + m * plane + ((qd + sd * d) * a.ih + qh + sh * (i0 + r)) * a.iw;
          const std::int64_t k0 = (qd * sh + qh) * sw;
          if (sw == 2 && a.phases[k0].depth > 0 && a.phases[k0 + 1].depth > 0) {
            zip_pair<P>(a, out + k0 * per_phase + (m * kRowsPerItem + r) * a.phases[k0].ow,
                        out + (k0 + 1) * per_phase + (m * kRowsPerItem + r) * a.phases[k0 + 1].ow,
                        to);
            continue;
          }
          for (std::int64_t qw = 0; qw < sw; ++qw) {
            const std::int64_t k = k0 + qw;
            const Phase& ph = a.phases[k];
            const T* from = out + k * per_phase + (m * kRowsPerItem + r) * ph.ow;
            if (ph.depth == 0)
              for (std::int64_t j = 0; j < ph.ow; ++j) to[qw + sw * j] = T{};
            else
              for (std::int64_t j = 0; j < ph.ow; ++j) to[qw + sw * j] = from[j];
          }
        }
      }
}

// Work items (image, group, depth slice d of `depths`, rows [h0, h0 + kRowsPerItem) of `rows`,
// output channel blocks [b0, b1) of `blocks`) shared among the threads, each item's window filled
// in its thread's words before body(n, grp, d, h0, b0, b1, window, after_window) runs
// (after_window: the thread's words past the window and its slack). Where there would be fewer
// than kItemsPerThread items a thread and the window has at most kSlicedMaxPlanes planes (input
// channels, or bf16 pairs, times its depth planes), the channel blocks are cut into slices, each
// its own item (refilling the window): a first layer on one small image left a thread waiting
// for the other's last item (size-40: 5 items on 2 threads). Measured call by call on the H200
// host's Emerald Rapids (docs/perf.md, "session 34 (CPU)"), C = 3 forward, min: 2 threads
// size-56 7-9% faster, size-40 3% slower then 11% faster, size-32 mixed; 16 threads size-128
// 12-19%, size-224 9-13%, conv1 at batch 1 4-6% faster. With more planes the refills cost more
// than the balance gave: 16 (seed004's forward) 3-6% slower, 64 (a 56 x 56 layer on 16 threads)
// 5%, backward-data over 32 dy channels 22-24%; so those are not sliced (4 planes itself, and
// bf16 with C <= 8, were not measured). Sizes follow the team's threads (omp_get_num_threads), not
// the most there could be; a team of one never slices (it would balance nothing).
constexpr std::int64_t kItemsPerThread = 4;
constexpr std::int64_t kSlicedMaxPlanes = 4;
template <class P, class Body>
void for_each_item(const Args& a, std::int64_t depths, std::int64_t rows, std::int64_t blocks,
                   const Body& body) {
  const std::int64_t row_groups = (rows + kRowsPerItem - 1) / kRowsPerItem;
  const std::int64_t items = a.n * a.g * depths * row_groups;
  const bool may_slice = a.window_planes * a.kd <= kSlicedMaxPlanes;
#pragma omp parallel
  {
    const std::int64_t wanted = kItemsPerThread * omp_get_num_threads();
    const std::int64_t slices = !may_slice || omp_get_num_threads() == 1 || items >= wanted
                                    ? 1
                                    : lesser(blocks, (wanted + items - 1) / items);
    const std::int64_t per_image = depths * row_groups * slices;
    auto* window =
        reinterpret_cast<typename P::Word*>(a.windows) + omp_get_thread_num() * a.thread_words();
    auto* after_window = window + a.window_floats() + kWindowSlack;
#pragma omp for collapse(3) schedule(dynamic)
    for (std::int64_t n = 0; n < a.n; ++n)
      for (std::int64_t grp = 0; grp < a.g; ++grp)
        for (std::int64_t item = 0; item < per_image; ++item) {
          const std::int64_t slice = item % slices, place = item / slices;
          const std::int64_t d = place / row_groups, h0 = place % row_groups * kRowsPerItem;
          // With column phases (sw > 1) fill_window pads each row in after_window first.
          fill_window<P>(a, n, grp, d, h0, window, after_window);
          body(n, grp, d, h0, slice * blocks / slices, (slice + 1) * blocks / slices, window,
               after_window);
        }
    // Non-temporal stores are weakly ordered: drained before the region's closing barrier.
    if (a.stream_out) _mm_sfence();
  }
}

// Strided backward-data (Phase): work items over the first phase's depth slices and rows (the
// most any phase has), their windows one dy row and plane apart; per channel block each item runs
// every phase into the thread's phase outputs (after its window: sw is 1 here, so fill_window
// never pads a row there) and interleaves them into dx.
template <class P>
void run_phased(const Args& a) {
  using T = typename P::T;
  const std::int64_t blocks = (a.cg + kBlockChannels - 1) / kBlockChannels;
  const std::int64_t plane = a.id * a.ih * a.iw;
  const Phase& first = a.phases[0];
  const std::int64_t per_phase = kBlockChannels * kRowsPerItem * first.ow;
  for_each_item<P>(
      a, first.od, first.oh, blocks,
      [&](std::int64_t n, std::int64_t grp, std::int64_t d, std::int64_t i0, std::int64_t b0,
          std::int64_t b1, const typename P::Word* window, typename P::Word* after_window) {
        T* out = reinterpret_cast<T*>(after_window);
        for (std::int64_t b = b0; b < b1; ++b) {
          const std::int64_t c0 = b * kBlockChannels;
          const int mr = static_cast<int>(lesser(a.cg - c0, kBlockChannels));
          for (int k = 0; k < a.phase_count; ++k)
            run_phase<P>(a, a.phases[k], grp * blocks + b, mr, d, i0, window, out + k * per_phase);
          interleave_phases<P>(a, out,
                               static_cast<T*>(a.dx) + ((n * a.g + grp) * a.cg + c0) * plane, plane,
                               mr, d, i0);
        }
      });
}

template <class P>
void run(const Args& a) {
  if (a.phase_count > 0) return run_phased<P>(a);
  const std::int64_t blocks = (a.cg + kBlockChannels - 1) / kBlockChannels;
  const std::int64_t plane = a.id * a.ih * a.iw;
  const bool flat = flattens<P>(a);
  const auto item = [&](std::int64_t n, std::int64_t grp, std::int64_t d, std::int64_t h0,
                        std::int64_t b0, std::int64_t b1, const typename P::Word* window,
                        typename P::Word*) {
    // The item's last row (its window holds these rows' inputs and no more).
    const std::int64_t h_end = lesser(h0 + kRowsPerItem, a.ih);
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t c0 = b * kBlockChannels;
      const int mr = static_cast<int>(lesser(a.cg - c0, kBlockChannels));
      const Shape<P> shape = shape_for<P>(mr, a.iw, flat);
      const auto* w =
          static_cast<const typename P::Word*>(a.w) + (grp * blocks + b) * a.depth * kBlockChannels;
      for (std::int64_t h = h0; h < h_end; h += shape.rows) {
        const int rows = static_cast<int>(lesser(h_end - h, shape.rows));
        auto* dx = static_cast<typename P::T*>(a.dx) + ((n * a.g + grp) * a.cg + c0) * plane +
                   (d * a.ih + h) * a.iw;
        shape.fn(a, window + (h - h0) * a.row_step(), w, dx, plane, rows);
      }
    }
  };
  for_each_item<P>(a, a.id, a.ih, blocks, item);
}

}  // namespace
}  // namespace convguard::cpu::rows_conv
