// cpu:nchw_gemm's GEMM loop, generic over an element policy (how a panel is packed, how a tile is
// computed and stored): F32<W> here for fp32 with W-float vectors, Bf16 (vdpbf16ps pairs) in
// nchw_gemm_bf16_avx512.cpp, Bf16Widened (bf16 widened to fp32 in the pack) in
// nchw_gemm_bf16_f32_avx512.cpp. Included only by the per-ISA files, compiled with that ISA's
// flags; internal linkage and no library templates (see simd.hpp).
//
// Each work item packs a block of panels (columns: pixels, several images' when a plane does not
// fill whole panels) of `in` into dense [words][cols] buffers, then runs the register tile over
// every (filter row block, panel) pair of its range: row blocks outer (the panels stay in L2, the
// row block in L1), or panels outer where the item's filter rows fit kPanelOuterBytes (each panel
// stays in L1 for all of them); long reductions a depth block at a time (kDepthBlockWords).
// Each output element is one tile's sum in a fixed order (a depth-blocked sum goes on from where
// the previous block left it, the same additions in the same order), so the result depends
// neither on the thread count nor on the loop order.
#pragma once

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "cpu/solvers/nchw_gemm_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::nchw_gemm {
namespace {

using simd::lesser;

// Columns [j0, j0 + len) of a panel whose elements are at p, p + step, ... (p null: none; zero
// when read, not stored when written). A stride-2 1x1 layer's columns are runs of step 2.
template <class T>
struct Run {
  int j0, len;
  std::int64_t step;
  const T* p;
};

// Splits a panel's column addresses into runs; returns how many.
template <class T>
int runs_of(const T* const* at, int cols, Run<T>* runs) {
  int count = 0;
  for (int j = 0; j < cols; ++j) {
    if (count > 0) {
      Run<T>& last = runs[count - 1];
      if (at[j] == nullptr && last.p == nullptr) {
        ++last.len;
        continue;
      }
      if (at[j] && last.p) {
        const std::int64_t step = last.len == 1 ? at[j] - last.p : last.step;
        if (step > 0 && at[j] == last.p + last.len * step) {
          last.step = step;
          ++last.len;
          continue;
        }
      }
    }
    runs[count++] = Run<T>{j, 1, 1, at[j]};
  }
  return count;
}

// One filter row block as the register tile reads it: row r's word d at rows[r][d * step].
// Packed: a block's [words][rows] words (step = rows); in place: the caller's rows (step 1), a
// block's rows past the last repeating it (computed, never stored).
template <class Word, int MR>
struct FilterRows {
  const Word* rows[MR];
  std::int64_t step;
};

template <class Word, int MR>
FilterRows<Word, MR> filter_rows(const Args& g, std::int64_t grp, std::int64_t mb,
                                 std::int64_t words, int rows) {
  const Word* A = static_cast<const Word*>(g.a);
  FilterRows<Word, MR> f;
  if (g.a_row_words > 0) {
    const Word* first = A + (grp * g.m + mb * MR) * g.a_row_words;
    for (int r = 0; r < MR; ++r) f.rows[r] = first + (r < rows ? r : rows - 1) * g.a_row_words;
    f.step = 1;
    return f;
  }
  const Word* block = A + (grp * ((g.m + MR - 1) / MR) + mb) * words * MR;
  for (int r = 0; r < MR; ++r) f.rows[r] = block + r;
  f.step = MR;
  return f;
}

// The most bytes of filter rows for which a work item runs its panels in the outer loop (run).
constexpr std::int64_t kPanelOuterBytes = 64 * 1024;

// Depth blocks: a reduction longer than 1.5 blocks of kDepthBlockWords is summed a block at a
// time, the partial sums of up to kBlockedRowBlocks row blocks kept between blocks in a
// per-thread buffer (24 KiB on AVX-512, 6 KiB on AVX2), so that the panel's block (128 words x 48
// columns, 24 KiB) stays in L1 for all of them. Its outputs are stored from the buffer with plain
// stores, not streamed (Args::stream_out): a 256 -> 1024 14x14 b8 output (6.4 MB) was streamed
// before and is faster blocked (below). In one pass over the whole reduction the panel (384 KiB for
// 2048 channels) came from L2 for every row block. Xeon Ice Lake, fp32 forward b8, driver min ms
// alternating (2026-11-29, docs/perf.md "session 12"): 2048->512 7x7 1x1 3.98-4.07 -> 3.16-3.47,
// 1024->256 14x14 3.74-4.29 -> 2.94-3.34, 3x3 256 14x14 8.84-10.96 -> 6.86-7.44, 3x3 64
// 56x56 11.1-11.4 -> 9.9-10.1; reductions of up to 192 words stay one pass (64- and 128-channel 1x1
// layers the same). Blocks of 64 words, or groups of 4 or 8 row blocks, measured the same or
// slower.
constexpr std::int64_t kDepthBlockWords = 128;
constexpr int kBlockedRowBlocks = 16;

// P::accumulate over the first `vectors` of the tile's NV vectors (the rest zero): a panel of
// fewer columns than the tile's, the last of a reduction over few pixels (a 7x7 plane at batch 8
// is 392 columns: 8 whole panels of 48 and one of 8, a ninth of the multiply-adds), computes only
// the vectors that hold any.
template <class P, class... Ts>
[[gnu::always_inline]] inline void accumulate_vectors(int vectors, Ts&&... args) {
  static_assert(P::NV <= 3, "narrow tiles of 1 and 2 vectors");
  if constexpr (P::NV > 1)
    if (vectors == 1) return P::template accumulate<1>(std::forward<Ts>(args)...);
  if constexpr (P::NV > 2)
    if (vectors == 2) return P::template accumulate<2>(std::forward<Ts>(args)...);
  P::accumulate(std::forward<Ts>(args)...);
}

template <class P>
void run(const Args& g) {
  using T = typename P::T;
  using Word = typename P::Word;
  constexpr int MR = P::kRows, PB = P::kCols;
  const std::int64_t words = P::words(g.depth), total = g.n * g.columns;
  const std::int64_t panels = (total + PB - 1) / PB, threads = omp_get_max_threads();
  // Work items want to be at least 8 per thread. Fewer panels per block come first: an item packs
  // its panels once for all its row blocks, while splitting the row blocks too (below) packs each
  // panel once per split. A 32x32 first layer (16 panels, 27 rows) packed every panel 11 times.
  std::int64_t Q = g.panels_per_block;
  while (Q > 1 && g.g * ((panels + Q - 1) / Q) < 8 * threads) Q = (Q + 1) / 2;
  const std::int64_t blocks = (panels + Q - 1) / Q, mblocks = (g.m + MR - 1) / MR;
  const std::int64_t base = g.g * blocks;
  // Row blocks are split too when there are still few panel blocks (a 7x7 plane at batch 8 is 7
  // panels), so that every thread gets several items.
  std::int64_t chunks = lesser(mblocks, (8 * threads + base - 1) / base);
  if (chunks < 1) chunks = 1;
  const std::int64_t per_chunk = (mblocks + chunks - 1) / chunks;
  chunks = (mblocks + per_chunk - 1) / per_chunk;
  const T* in = static_cast<const T*>(g.in);
  T* out = static_cast<T*>(g.out);
  constexpr int kAccFloats = sizeof(typename P::Acc) / sizeof(float);
#pragma omp parallel
  {
    Word* buffer = static_cast<Word*>(g.panels) + omp_get_thread_num() * Q * words * PB;
    alignas(64) float tmp[MR * PB];
    alignas(64) float blocked[kBlockedRowBlocks][MR * PB];  // depth-blocked partial sums
    const T* src[PB];
    const T* dst[PB];
    Run<T> in_runs[PB];
    Run<T> out_runs[kMaxPanelsPerBlock][PB];
    int nout[kMaxPanelsPerBlock];
    int vectors[kMaxPanelsPerBlock];         // the tile's vectors a panel's columns reach
    const Word* panel[kMaxPanelsPerBlock];   // each panel's first row: packed, or `in` itself
    std::int64_t pitch[kMaxPanelsPerBlock];  // between its rows
#pragma omp for schedule(dynamic)
    for (std::int64_t item = 0; item < base * chunks; ++item) {
      const std::int64_t grp = item / (blocks * chunks), block = item / chunks % blocks;
      const std::int64_t chunk = item % chunks, q0 = block * Q;
      const int qn = static_cast<int>(lesser(Q, panels - q0));
      for (int q = 0; q < qn; ++q) {
        const std::int64_t c0 = (q0 + q) * PB;
        const int cols = static_cast<int>(lesser(PB, total - c0));
        vectors[q] = (cols * P::NV + PB - 1) / PB;
        // Column c0 + j is pixel p of image img, both carried along j: two divisions a column
        // were about a tenth of a 64-channel 1x1 layer's time (res2a_branch2a bf16, Zen 5).
        std::int64_t img = c0 / g.columns, p = c0 % g.columns;
        for (int j = 0; j < PB; ++j) {
          src[j] = dst[j] = nullptr;
          if (j >= cols) continue;
          if (g.gather[p] >= 0) src[j] = in + (img * g.g + grp) * g.in_group + g.gather[p];
          if (g.scatter[p] >= 0)
            dst[j] = out + (img * g.g + grp) * g.m * g.out_plane + g.scatter[p];
          if (++p == g.columns) p = 0, ++img;
        }
        const int nin = runs_of(src, PB, in_runs);
        nout[q] = runs_of(dst, cols, out_runs[q]);
        // fp32 rows a uniform stride apart (1x1) whose panel is one dense run of `in` are read
        // where they are: packing them was a fifth of a 64-channel 1x1 layer's time.
        if constexpr (P::kReadsInPlace) {
          if (g.depth_stride > 0 && nin == 1 && in_runs[0].p && in_runs[0].len == PB &&
              in_runs[0].step == 1) {
            panel[q] = reinterpret_cast<const Word*>(in_runs[0].p);
            pitch[q] = g.depth_stride;
            continue;
          }
        }
        P::pack(buffer + q * words * PB, in_runs, nin, g.depth, g.depth_at);
        panel[q] = buffer + q * words * PB;
        pitch[q] = PB;
      }
      const std::int64_t m0 = chunk * per_chunk, m1 = lesser(mblocks, m0 + per_chunk);
      const auto rows_of = [&](std::int64_t mb) {
        return static_cast<int>(lesser(MR, g.m - mb * MR));
      };
      // Row block mb's sums for panel q (rows PB floats apart) to its output runs.
      const auto store = [&](std::int64_t mb, int q, const float* sums) {
        for (int r = 0; r < rows_of(mb); ++r)
          for (int k = 0; k < nout[q]; ++k) {
            const Run<T>& u = out_runs[q][k];
            if (!u.p) continue;
            T* o = const_cast<T*>(u.p) + (mb * MR + r) * g.out_plane;
            P::store_row(sums + r * PB + u.j0, o, u.len, u.step);
          }
      };
      // A tile's accumulators to its [MR][PB] floats.
      const auto spill = [](const typename P::Acc(&acc)[MR][P::NV], float* to) {
        for (int r = 0; r < MR; ++r)
          for (int v = 0; v < P::NV; ++v)
            std::memcpy(to + r * PB + v * kAccFloats, &acc[r][v], sizeof acc[r][v]);
      };
      const auto tile = [&](std::int64_t mb, int q) {
        const int rows = rows_of(mb);
        const FilterRows<Word, MR> a = filter_rows<Word, MR>(g, grp, mb, words, rows);
        const Word* b = panel[q];
        const Run<T>& first = out_runs[q][0];
        if (nout[q] == 1 && first.len == PB && first.step == 1 && first.p) {
          T* o = const_cast<T*>(first.p) + mb * MR * g.out_plane;
          P::tile(a, b, pitch[q], words, o, g.out_plane, rows, g.stream_out);
          return;
        }
        if (vectors[q] < P::NV) {  // the narrow tail
          typename P::Acc acc[MR][P::NV];
          accumulate_vectors<P>(vectors[q], a, b, pitch[q], words, acc, nullptr);
          spill(acc, tmp);
        } else {
          P::tile_f32(a, b, pitch[q], words, tmp, PB, rows);
        }
        store(mb, q, tmp);
      };
      if (words > kDepthBlockWords + kDepthBlockWords / 2) {
        // Depth blocks (kDepthBlockWords): per panel and group of row blocks, each block of the
        // panel's rows is swept by the group's filter rows while it is in L1; the sums go on from
        // the buffer, in the same order as one pass, so the result is the same bits.
        for (int q = 0; q < qn; ++q)
          for (std::int64_t g0 = m0; g0 < m1; g0 += kBlockedRowBlocks) {
            const std::int64_t g1 = lesser(m1, g0 + kBlockedRowBlocks);
            for (std::int64_t d0 = 0; d0 < words; d0 += kDepthBlockWords) {
              const std::int64_t len = lesser(kDepthBlockWords, words - d0);
              for (std::int64_t mb = g0; mb < g1; ++mb) {
                FilterRows<Word, MR> a = filter_rows<Word, MR>(g, grp, mb, words, rows_of(mb));
                for (int r = 0; r < MR; ++r) a.rows[r] += d0 * a.step;
                float* sums = blocked[mb - g0];
                typename P::Acc acc[MR][P::NV];
                accumulate_vectors<P>(vectors[q], a, panel[q] + d0 * pitch[q], pitch[q], len, acc,
                                      d0 == 0 ? nullptr : sums);
                spill(acc, sums);
              }
            }
            for (std::int64_t mb = g0; mb < g1; ++mb) store(mb, q, blocked[mb - g0]);
          }
        continue;
      }
      // A tile step reads PB / 16 panel vectors and MR filter words: the panel is the larger
      // stream, so where the item's filter rows fit a share of L2 (a first layer's 64 x 147) each
      // panel is swept by all of them while it is in L1. Larger filters keep one row block in
      // L1 over the item's panels, read from L2, so that the filter is read from memory once per
      // block of panels.
      if ((m1 - m0) * MR * words * static_cast<std::int64_t>(sizeof(Word)) <= kPanelOuterBytes) {
        for (int q = 0; q < qn; ++q)
          for (std::int64_t mb = m0; mb < m1; ++mb) tile(mb, q);
      } else {
        for (std::int64_t mb = m0; mb < m1; ++mb)
          for (int q = 0; q < qn; ++q) tile(mb, q);
      }
    }
    // Non-temporal stores are weakly ordered: drained before the region's closing barrier.
    if (g.stream_out) _mm_sfence();
  }
}

// fp32 with W-float vectors.
template <int W>
struct F32 {
  using T = float;
  using Word = float;
  using vf = typename simd::Vec<W>::type;
  static constexpr int kRows = W == 16 ? kRowsAvx512 : kRowsAvx2;
  static constexpr int kCols = W == 16 ? kColsAvx512 : kColsAvx2;
  static constexpr int NV = kCols / W;

  static constexpr bool kReadsInPlace = true;  // a panel's rows may be read where they are
  static std::int64_t words(std::int64_t depth) { return depth; }
  // A run of `len` outputs `step` apart (a strided 1x1 backward-data's dx row).
  static void store_row(const float* from, float* to, int len, std::int64_t step) {
    if (step == 1) {
      std::memcpy(to, from, sizeof(float) * len);
      return;
    }
    if constexpr (W == 16) {
      // The even lanes of 2n - 1 (nchw_gemm_bf16_store.hpp's store_bf16_row says why).
      if (step == 2) {
        for (int i = 0; i < len; i += 8) {
          const int n = len - i < 8 ? len - i : 8;
          const __m512 v = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), from + i);
          _mm512_mask_storeu_ps(to + 2 * i,
                                static_cast<__mmask16>(0x5555u & ((1u << (2 * n - 1)) - 1)),
                                _mm512_maskz_expand_ps(0x5555, v));
        }
        return;
      }
    }
    for (int i = 0; i < len; ++i) to[i * step] = from[i];
  }

  // to[i] = from[2 i] for i < len: a stride-2 layer's panel row (conv1's 7x7, the 1x1 downsamples);
  // element by element on AVX2.
  // Element by element this was half a first layer's packing time against its 64 filter rows of
  // multiply-adds. Two masked loads cover the 2n - 1 elements of n <= 16 outputs (nothing past the
  // last, which may be the tensor's last) and one permute keeps the even ones.
  static void pack_even(float* to, const float* from, int len) {
    if constexpr (W == 16) {
      const __m512i even =
          _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
      for (int i = 0; i < len; i += 16) {
        const int n = len - i < 16 ? len - i : 16, span = 2 * n - 1;
        const auto lo_mask = static_cast<__mmask16>(span >= 16 ? 0xffffu : (1u << span) - 1);
        const auto hi_mask = static_cast<__mmask16>(span > 16 ? (1u << (span - 16)) - 1 : 0u);
        const __m512 lo = _mm512_maskz_loadu_ps(lo_mask, from + 2 * i);
        const __m512 hi = _mm512_maskz_loadu_ps(hi_mask, from + 2 * i + 16);
        _mm512_mask_storeu_ps(to + i, static_cast<__mmask16>((1u << n) - 1),
                              _mm512_permutex2var_ps(lo, even, hi));
      }
    } else {
      for (int i = 0; i < len; ++i) to[i] = from[2 * i];
    }
  }

  static void pack(float* b, const Run<float>* runs, int count, std::int64_t depth,
                   const std::int64_t* at) {
    for (std::int64_t d = 0; d < depth; ++d) {
      float* row = b + d * kCols;
      for (int r = 0; r < count; ++r) {
        const Run<float>& u = runs[r];
        float* to = row + u.j0;
        if (!u.p) {
          std::memset(to, 0, sizeof(float) * u.len);
        } else if (u.step == 1) {
          std::memcpy(to, u.p + at[d], sizeof(float) * u.len);
        } else if (u.step == 2) {
          pack_even(to, u.p + at[d], u.len);
        } else {
          const float* from = u.p + at[d];
          for (int i = 0; i < u.len; ++i) to[i] = from[i * u.step];
        }
      }
    }
  }

  // out[r][0..kCols) (rows ldo apart) = sum over d of a(r, d) * b[d][0..kCols) (rows ldb apart),
  // for r < rows.
  // stream: non-temporal stores where out's rows are whole aligned vectors (Args::stream_out).
  // acc[r][v] = sum over d of a(r, d) * b[d][v * W .. (v + 1) * W) (b's rows ldb apart). Also the
  // tile of the widened-bf16 policy (nchw_gemm_bf16_f32_avx512.cpp), which stores it rounded.
  // init: the sums so far ([kRows][kCols] floats: a depth block's, run() says when), or null.
  // NU: the vectors computed (a panel's last columns, run()'s narrow tail); the others stay zero.
  using Acc = vf;
  template <int NU = NV>
  [[gnu::always_inline]] static void accumulate(const FilterRows<float, kRows>& a, const float* b,
                                                std::int64_t ldb, std::int64_t depth,
                                                vf (&acc)[kRows][NV], const float* init = nullptr) {
    for (int r = 0; r < kRows; ++r)
      for (int v = 0; v < NV; ++v)
        acc[r][v] = init && v < NU ? simd::load<W>(init + r * kCols + v * W) : vf{};
    for (std::int64_t d = 0; d < depth; ++d) {
      vf bv[NU];
      for (int v = 0; v < NU; ++v) bv[v] = simd::load<W>(b + d * ldb + v * W);
      for (int r = 0; r < kRows; ++r) {
        const vf s = simd::broadcast<W>(a.rows[r] + d * a.step);
        for (int v = 0; v < NU; ++v) acc[r][v] += s * bv[v];
      }
    }
  }
  // Not inlined: inlined into run()'s tile lambda, whose output pointer, pitch, row count and
  // stream flag stay live across this loop, GCC kept two of the eight filter row pointers on the
  // stack and incremented them there every step (perf annotate, conv1). Out of line, conv1 fp32
  // forward b8 11.4-11.6 -> 10.3-10.6 ms, 64 -> 256 56x56 4.0-4.9 -> 3.5-4.4, 128 -> 512 28x28
  // 3.13-3.48 -> 2.91-3.27 (Xeon Ice Lake, driver, alternating; docs/perf.md "session 12").
  [[gnu::noinline]] static void tile(const FilterRows<float, kRows>& a, const float* b,
                                     std::int64_t ldb, std::int64_t depth, float* out,
                                     std::int64_t ldo, int rows, bool stream = false) {
    vf acc[kRows][NV];
    accumulate(a, b, ldb, depth, acc);
    if (stream && reinterpret_cast<std::uintptr_t>(out) % sizeof(vf) == 0 && ldo % W == 0) {
      for (int r = 0; r < rows; ++r)
        for (int v = 0; v < NV; ++v) {
          if constexpr (W == 16)
            _mm512_stream_ps(out + r * ldo + v * W, reinterpret_cast<__m512>(acc[r][v]));
          else
            _mm256_stream_ps(out + r * ldo + v * W, reinterpret_cast<__m256>(acc[r][v]));
        }
      return;
    }
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < NV; ++v) std::memcpy(out + r * ldo + v * W, &acc[r][v], sizeof(vf));
  }
  static void tile_f32(const FilterRows<float, kRows>& a, const float* b, std::int64_t ldb,
                       std::int64_t depth, float* out, std::int64_t ldo, int rows) {
    tile(a, b, ldb, depth, out, ldo, rows);
  }
};

}  // namespace
}  // namespace convguard::cpu::nchw_gemm
