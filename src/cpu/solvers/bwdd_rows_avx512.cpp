// cpu:bwdd_rows's kernel (bwdd_rows_entry.hpp), compiled with -mavx512f -mfma.
//
// A register tile of MR dx channels x NV vectors of 16 pixels along one dx row (3 x 8 for a
// first layer's 3 channels, 6 x 4 from 6 channels up: 24 accumulators) runs the whole reduction:
// per reduction row j it loads NV dy vectors (contiguous in the padded dy row) and broadcasts MR
// filter values. Reads may run past a dy row (into the next one, or the buffer's slack): those
// lanes belong to pixels beyond dx's row and are never stored. Work items are (image, group,
// channel block, dx row); each dx element is one tile's, so the result does not depend on the
// thread count.
#include <immintrin.h>
#include <omp.h>

// GCC 12's masked stores and loads pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bwdd_rows_entry.hpp"

namespace convguard::cpu::bwdd_rows {
namespace {

// MR channels x R dx rows x V vectors of 16 pixels from pixel at0 of each row; `mask` is the
// last vector's pixels (all 16 but at a row's end), `vectors` how many of the V a row has, and
// `rows` how many of the R rows exist (the others repeat the last and are not stored). Narrow
// rows take several rows per tile: a 32-wide first layer fills 4 rows x 2 vectors, not 2 of 8.
template <int MR, int R, int V>
void tile(const Args& a, const float* dy, const float* w, float* dx, std::int64_t plane,
          std::int64_t at0, int vectors, __mmask16 mask, int rows) {
  __m512 acc[MR][R * V];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int v = 0; v < R * V; ++v) acc[m][v] = _mm512_setzero_ps();
  std::int64_t row_at[R];
  for (int i = 0; i < R; ++i) row_at[i] = (i < rows ? i : rows - 1) * a.dy_step_h + at0;
  for (std::int64_t j = 0; j < a.depth; ++j) {
    const float* tap = dy + a.tap_at[j];
    const float* wj = w + j * kBlockChannels;
    __m512 d[R * V];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) d[i * V + v] = _mm512_loadu_ps(tap + row_at[i] + v * 16);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) {
      const __m512 s = _mm512_set1_ps(wj[m]);
#pragma GCC unroll 8
      for (int v = 0; v < R * V; ++v) acc[m][v] = _mm512_fmadd_ps(s, d[v], acc[m][v]);
    }
  }
  for (int i = 0; i < rows; ++i)
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        float* to = dx + m * plane + i * a.iw + at0 + v * 16;
        if (v < vectors - 1) _mm512_storeu_ps(to, acc[m][i * V + v]);
        if (v == vectors - 1) _mm512_mask_storeu_ps(to, mask, acc[m][i * V + v]);
      }
}

// `rows` (at most R) consecutive dx rows' pixels for MR channels, V vectors at a time.
template <int MR, int R, int V>
void rows_of(const Args& a, const float* dy, const float* w, float* dx, std::int64_t plane,
             int rows) {
  for (std::int64_t at = 0; at < a.iw; at += V * 16) {
    const std::int64_t left = a.iw - at;
    const int vectors = static_cast<int>(left >= V * 16 ? V : (left + 15) / 16);
    const int last = static_cast<int>(left - (vectors - 1) * 16);
    const __mmask16 mask =
        last >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << last) - 1);
    tile<MR, R, V>(a, dy, w, dx, plane, at, vectors, mask, rows);
  }
}

using RowsFn = void (*)(const Args&, const float*, const float*, float*, std::int64_t, int);
struct Shape {
  RowsFn fn;
  int rows;  // R
};
// The tile for MR channels and rows of `width` pixels: about 24 accumulators, as many whole rows
// as fit when a row is narrower than the tile.
template <int MR, int NV>
Shape shape_for(std::int64_t width) {
  const std::int64_t v = (width + 15) / 16;
  if constexpr (NV == 8) {
    if (v <= 1) return {&rows_of<MR, 8, 1>, 8};
    if (v <= 2) return {&rows_of<MR, 4, 2>, 4};
    if (v <= 4) return {&rows_of<MR, 2, 4>, 2};
    return {&rows_of<MR, 1, 8>, 1};
  } else if constexpr (NV == 6) {
    if (v <= 1) return {&rows_of<MR, 6, 1>, 6};
    if (v <= 2) return {&rows_of<MR, 3, 2>, 3};
    if (v <= 3) return {&rows_of<MR, 2, 3>, 2};
    return {&rows_of<MR, 1, 6>, 1};
  } else {
    if (v <= 1) return {&rows_of<MR, 4, 1>, 4};
    if (v <= 2) return {&rows_of<MR, 2, 2>, 2};
    return {&rows_of<MR, 1, 4>, 1};
  }
}
Shape shape_for(int mr, std::int64_t width) {
  switch (mr) {
    case 1:
      return shape_for<1, 8>(width);
    case 2:
      return shape_for<2, 8>(width);
    case 3:
      return shape_for<3, 8>(width);
    case 4:
      return shape_for<4, 6>(width);
    case 5:
      return shape_for<5, 4>(width);
    default:
      return shape_for<6, 4>(width);
  }
}

}  // namespace

void run_avx512(const Args& a) {
  const std::int64_t blocks = (a.cg + kBlockChannels - 1) / kBlockChannels;
  const std::int64_t plane = a.id * a.ih * a.iw;
  // Items of 8 dx rows (a multiple of every tile's row count: 1, 2, 3, 4, 6 or 8 would not all
  // divide 8, so a tile may end an item short, with its missing rows not stored).
  const std::int64_t groups_of_rows = a.id * ((a.ih + 7) / 8);
#pragma omp parallel for collapse(4) schedule(dynamic)
  for (std::int64_t n = 0; n < a.n; ++n)
    for (std::int64_t grp = 0; grp < a.g; ++grp)
      for (std::int64_t b = 0; b < blocks; ++b)
        for (std::int64_t item = 0; item < groups_of_rows; ++item) {
          const std::int64_t c0 = b * kBlockChannels;
          const int mr = static_cast<int>(a.cg - c0 < kBlockChannels ? a.cg - c0 : kBlockChannels);
          const Shape shape = shape_for(mr, a.iw);
          const std::int64_t d = item / ((a.ih + 7) / 8), h0 = item % ((a.ih + 7) / 8) * 8;
          const float* w = a.w + (grp * blocks + b) * a.depth * kBlockChannels;
          // 8 dx rows an item (a multiple of every tile's row count), in tiles of shape.rows.
          for (std::int64_t h = h0; h < h0 + 8 && h < a.ih; h += shape.rows) {
            const int rows = static_cast<int>(a.ih - h < shape.rows ? a.ih - h : shape.rows);
            const float* dy =
                a.dy + (n * a.g + grp) * a.dy_group + d * a.dy_step_d + h * a.dy_step_h;
            float* dx = a.dx + ((n * a.g + grp) * a.cg + c0) * plane + (d * a.ih + h) * a.iw;
            shape.fn(a, dy, w, dx, plane, rows);
          }
        }
}

}  // namespace convguard::cpu::bwdd_rows
