// cpu:pointwise's GEMM kernel, generic over the vector width W (floats). Included only by the
// per-ISA files pointwise_avx512.cpp / pointwise_avx2.cpp, compiled with that ISA's flags;
// internal linkage and no library templates (see simd.hpp).
//
// Each work item packs one panel of columns (pixels, several images' when a plane does not fill
// whole panels) of `in` into a dense [depth][cols] buffer, then runs the register tile over a
// range of row blocks against it. The panel is read once from memory and stays in L1/L2 for every
// row block; the filter's row blocks stream from L2/L3. Each output element is one tile's sum in a
// fixed order, so the result does not depend on the thread count.
#pragma once

#include <omp.h>

#include <cstdint>
#include <cstring>

#include "cpu/solvers/pointwise_entry.hpp"
#include "cpu/solvers/simd.hpp"

namespace convguard::cpu::pointwise {
namespace {

using simd::broadcast;
using simd::lesser;
using simd::load;
using simd::Vec;

template <int W>
inline constexpr int kRows = W == 16 ? kRowsAvx512 : kRowsAvx2;
template <int W>
inline constexpr int kCols = W == 16 ? kColsAvx512 : kColsAvx2;

// out[r][0..cols) (rows ldo apart) = sum over d of a[d][r] * b[d][0..cols), for r < rows.
template <int W>
[[gnu::always_inline]] inline void tile(const float* a, const float* b, std::int64_t depth,
                                        float* out, std::int64_t ldo, int rows) {
  using vf = typename Vec<W>::type;
  constexpr int MR = kRows<W>, NV = kCols<W> / W;
  vf acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = vf{};
  for (std::int64_t d = 0; d < depth; ++d) {
    vf bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load<W>(b + d * kCols<W> + v * W);
    for (int r = 0; r < MR; ++r) {
      const vf s = broadcast<W>(a + d * MR + r);
      for (int v = 0; v < NV; ++v) acc[r][v] += s * bv[v];
    }
  }
  for (int r = 0; r < rows; ++r)
    for (int v = 0; v < NV; ++v) std::memcpy(out + r * ldo + v * W, &acc[r][v], sizeof(vf));
}

// Columns [j0, j0 + len) of a panel whose addresses are p, p + step, ... (p null: none; zero
// when read, not stored when written). A stride-2 1x1 layer's columns are runs of step 2.
struct Run {
  int j0, len;
  std::int64_t step;
  const float* p;
};

// Splits a panel's column addresses into runs; returns how many.
inline int runs_of(const float* const* at, int cols, Run* runs) {
  int count = 0;
  for (int j = 0; j < cols; ++j) {
    if (count > 0) {
      Run& last = runs[count - 1];
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
    runs[count++] = Run{j, 1, 1, at[j]};
  }
  return count;
}

// dst[i] = src[i * step] for i < len (memcpy for step 1; the compiler vectorises step 2 with
// permutes).
[[gnu::always_inline]] inline void copy_strided(float* dst, const float* src, int len,
                                                std::int64_t step) {
  if (step == 1) {
    std::memcpy(dst, src, sizeof(float) * len);
  } else if (step == 2) {
    for (int i = 0; i < len; ++i) dst[i] = src[2 * i];
  } else {
    for (int i = 0; i < len; ++i) dst[i] = src[i * step];
  }
}

template <int W>
void run(const Args& g) {
  constexpr int MR = kRows<W>, PB = kCols<W>;
  const std::int64_t total = g.n * g.columns, panels = (total + PB - 1) / PB;
  const std::int64_t mblocks = (g.m + MR - 1) / MR, base = g.g * panels;
  const std::int64_t threads = omp_get_max_threads();
  // Row blocks are split too when there are few panels (a 7x7 plane at batch 1 is 2 panels).
  std::int64_t chunks = lesser(mblocks, (4 * threads + base - 1) / base);
  if (chunks < 1) chunks = 1;
  const std::int64_t per_chunk = (mblocks + chunks - 1) / chunks;
#pragma omp parallel
  {
    float* b = g.panels + omp_get_thread_num() * g.depth * PB;
    alignas(64) float tmp[MR * PB];
    const float* src[PB];
    const float* dst[PB];
    Run in_runs[PB], out_runs[PB];
#pragma omp for schedule(dynamic)
    for (std::int64_t item = 0; item < base * chunks; ++item) {
      const std::int64_t grp = item / (panels * chunks), panel = item / chunks % panels;
      const std::int64_t chunk = item % chunks, c0 = panel * PB;
      const int cols = static_cast<int>(lesser(PB, total - c0));
      for (int j = 0; j < PB; ++j) {
        src[j] = dst[j] = nullptr;
        if (j >= cols) continue;
        const std::int64_t q = c0 + j, img = q / g.columns, p = q % g.columns;
        if (g.gather[p] >= 0)
          src[j] = g.in + (img * g.g + grp) * g.depth * g.in_plane + g.gather[p];
        if (g.scatter[p] >= 0)
          dst[j] = g.out + (img * g.g + grp) * g.m * g.out_plane + g.scatter[p];
      }
      const int nin = runs_of(src, PB, in_runs), nout = runs_of(dst, cols, out_runs);
      for (std::int64_t d = 0; d < g.depth; ++d) {
        float* row = b + d * PB;
        for (int r = 0; r < nin; ++r) {
          const Run& u = in_runs[r];
          if (u.p)
            copy_strided(row + u.j0, u.p + d * g.in_plane, u.len, u.step);
          else
            std::memset(row + u.j0, 0, sizeof(float) * u.len);
        }
      }
      const bool direct =
          nout == 1 && out_runs[0].len == PB && out_runs[0].step == 1 && out_runs[0].p;
      const std::int64_t m0 = chunk * per_chunk, m1 = lesser(mblocks, m0 + per_chunk);
      for (std::int64_t mb = m0; mb < m1; ++mb) {
        const float* a = g.a + (grp * mblocks + mb) * g.depth * MR;
        const int rows = static_cast<int>(lesser(MR, g.m - mb * MR));
        if (direct) {
          float* out = const_cast<float*>(out_runs[0].p) + mb * MR * g.out_plane;
          tile<W>(a, b, g.depth, out, g.out_plane, rows);
          continue;
        }
        tile<W>(a, b, g.depth, tmp, PB, rows);
        for (int r = 0; r < rows; ++r)
          for (int k = 0; k < nout; ++k) {
            const Run& u = out_runs[k];
            if (!u.p) continue;
            float* out = const_cast<float*>(u.p) + (mb * MR + r) * g.out_plane;
            const float* in = tmp + r * PB + u.j0;
            for (int i = 0; i < u.len; ++i) out[i * u.step] = in[i];
          }
      }
    }
  }
}

}  // namespace
}  // namespace convguard::cpu::pointwise
