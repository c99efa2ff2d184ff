#include "cpu/solvers/winograd.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/blas.hpp"
#include "cpu/isa.hpp"
#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/nchw_gemm_entry.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;
constexpr std::int64_t kTileBatch = 256;  // tiles transformed and multiplied at once

// Transform matrices (row-major): BT alpha x alpha, G alpha x 3, AT m x alpha.
constexpr float kBT2[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
constexpr float kG2[] = {1, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f, -0.5f, 0.5f, 0, 0, 1};
constexpr float kAT2[] = {1, 1, 1, 0, 0, 1, -1, -1};
constexpr float kBT4[] = {4, 0,  -5, 0, 1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
                          0, -2, -1, 2, 1, 0, 0, 2,  -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1};
constexpr float kG4[] = {1.f / 4,  0,         0,        -1.f / 6, -1.f / 6, -1.f / 6,
                         -1.f / 6, 1.f / 6,   -1.f / 6, 1.f / 24, 1.f / 12, 1.f / 6,
                         1.f / 24, -1.f / 12, 1.f / 6,  0,        0,        1};
constexpr float kAT4[] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0,
                          0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};
// F(m x m, 3 x 3): the matrices as compile-time constants, so that the unrolled transforms below
// fold their zeros and ones (as runtime pointers the generic loops were a larger share of the
// time than the GEMMs: perf, 14x14 256 -> 256 at batch 8).
// Backward-weights (the same F(m x m, 3 x 3) read the other way: dW = G^T [(A dy A^T) . (B^T x
// B)] G, the transposition of Y = A^T [(G w G^T) . (B^T x B)] A) takes A and G^T as well.
template <int R, int C>
struct Transposed {  // the transpose of a row-major R x C matrix
  float v[R * C];
  constexpr explicit Transposed(const float* m) : v{} {
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) v[j * R + i] = m[i * C + j];
  }
};
constexpr Transposed<2, 4> kA2{kAT2};
constexpr Transposed<4, 6> kA4{kAT4};
constexpr Transposed<4, 3> kGT2{kG2};
constexpr Transposed<6, 3> kGT4{kG4};
template <int M>
struct Transform {
  static constexpr int m = M, a = M + 2;
  static constexpr const float* bt = M == 2 ? kBT2 : kBT4;
  static constexpr const float* g = M == 2 ? kG2 : kG4;
  static constexpr const float* at = M == 2 ? kAT2 : kAT4;
  static constexpr const float* a_mat = M == 2 ? kA2.v : kA4.v;  // alpha x m
  static constexpr const float* gt = M == 2 ? kGT2.v : kGT4.v;   // 3 x alpha
};

// Lanes a transform runs at once: 8 filters (channels) or 8 tiles, each lane its own sandwich.
constexpr int kLanes = 8;
using Lanes = float[kLanes];

// The lanes of the block from i0 of `total` values that hold values of their own: a ragged last
// block's other lanes repeat its last value and are never stored.
inline int lanes_at(std::int64_t i0, std::int64_t total) {
  return static_cast<int>(std::min<std::int64_t>(kLanes, total - i0));
}
// The first `lanes` lanes of v[0..count) to `count` rows `stride` floats apart from `to`.
[[gnu::always_inline]] inline void store_lanes(const Lanes* v, int count, float* to,
                                               std::int64_t stride, int lanes) {
  for (int i = 0; i < count; ++i)
    for (int l = 0; l < lanes; ++l) to[i * stride + l] = v[i][l];
}
// v[0..count) from `count` rows `stride` floats apart from `from`, lanes past `lanes` repeating
// the last.
[[gnu::always_inline]] inline void load_lanes(const float* from, int count, std::int64_t stride,
                                              int lanes, Lanes* v) {
  for (int i = 0; i < count; ++i)
    for (int l = 0; l < kLanes; ++l) v[i][l] = from[i * stride + std::min(l, lanes - 1)];
}

// out (R x C) = L (R x N) * X (N x K) * Rm^T where Rm is (C x K); all small, row-major, each
// element kLanes independent values. Unrolled over the compile-time matrices, a zero coefficient
// is skipped (its product would only add zeros) and the lane loops are vector operations: one
// tile or filter at a time, the transforms took more time than the GEMMs (perf, 3x3 256 -> 256
// 14x14 batch 8, Zen 1: filters 20%, tiles 29%, GEMMs 43% of the solver's time).
template <int R, int N, int K, int C>
[[gnu::always_inline]] inline void sandwich(const float* L, const Lanes* X, const float* Rm,
                                            Lanes* out) {
  alignas(32) Lanes tmp[R * K];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < K; ++j) {
      for (int l = 0; l < kLanes; ++l) tmp[i * K + j][l] = 0;
#pragma GCC unroll 8
      for (int q = 0; q < N; ++q) {
        const float c = L[i * N + q];
        if (c != 0)
          for (int l = 0; l < kLanes; ++l) tmp[i * K + j][l] += c * X[q * K + j][l];
      }
    }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < C; ++j) {
      for (int l = 0; l < kLanes; ++l) out[i * C + j][l] = 0;
#pragma GCC unroll 8
      for (int q = 0; q < K; ++q) {
        const float c = Rm[j * K + q];
        if (c != 0)
          for (int l = 0; l < kLanes; ++l) out[i * C + j][l] += c * tmp[i * K + q][l];
      }
    }
}

// The convolution Winograd computes, whichever direction it serves: `cin` channels of a zero-
// padded input (ph x pw, with tile slack) into `kout` channels of oh x ow, per group.
struct Conv {
  std::int64_t n, g, cin, kout, ph, pw, oh, ow;
  std::int64_t tiles_h(int m) const { return (oh + m - 1) / m; }
  std::int64_t tiles_w(int m) const { return (ow + m - 1) / m; }
};

// U[g][xi][k][c] from filters f(k, c) = 3x3 taps (row-major), kLanes channels at a time (the
// last lanes of a ragged block computed on a repeated channel and not stored).
template <class T, class F>
void transform_filters(const Conv& cv, F&& filter, float* U) {
  constexpr int a2 = T::a * T::a;
  const std::int64_t blocks = (cv.cin + kLanes - 1) / kLanes;
#pragma omp parallel for collapse(3)
  for (std::int64_t g = 0; g < cv.g; ++g)
    for (std::int64_t k = 0; k < cv.kout; ++k)
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t c0 = b * kLanes;
        const int lanes = lanes_at(c0, cv.cin);
        alignas(32) Lanes taps[9], u[36];
        for (int l = 0; l < kLanes; ++l) {
          float f[9];
          filter(g, k, c0 + std::min(l, lanes - 1), f);
          for (int t = 0; t < 9; ++t) taps[t][l] = f[t];
        }
        sandwich<T::a, 3, 3, T::a>(T::g, taps, T::g, u);
        store_lanes(u, a2, U + (g * a2 * cv.kout + k) * cv.cin + c0, cv.kout * cv.cin, lanes);
      }
}

// alpha^2 products at once, out_xi (m x columns) = a_xi (m x depth) in_xi (depth x columns), all
// row-major and dense: forward's M_xi = U_xi V_xi over a batch of tiles (depth: channels),
// backward-weights' M_xi = U_xi V_xi over tiles (depth: tiles, columns: channels). One grouped
// GEMM on cpu:nchw_gemm's register tiles (a group per xi, a's rows read in place, in's panels in
// place where they are whole), one parallel region for all of them. As alpha^2 BLAS calls
// (OpenBLAS 0.3.21 with its own threads beside OpenMP's) a 3x3 256 -> 256 14x14 layer at batch 8
// spent more time in the two pools' yields than in the GEMMs (perf, Zen 1). Without AVX2
// (CONVGUARD_CPU_ISA=baseline) the BLAS calls remain.
struct GroupedGemm {
  std::vector<std::int64_t> columns, depth_at;  // identity columns; reduction row d at d * columns
  void run(int groups, std::int64_t m, std::int64_t depth, std::int64_t n, const float* a_mat,
           const float* in, float* out) {
    const IsaLevel isa = isa_level();
    if (isa == IsaLevel::baseline) {
      for (int xi = 0; xi < groups; ++xi)
        blas::sgemm(false, false, m, n, depth, 1.f, a_mat + xi * m * depth, depth,
                    in + xi * depth * n, n, 0.f, out + xi * m * n, n);
      return;
    }
    if (static_cast<std::int64_t>(columns.size()) < n) {
      columns.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) columns[static_cast<std::size_t>(i)] = i;
    }
    depth_at.resize(static_cast<std::size_t>(depth));
    for (std::int64_t d = 0; d < depth; ++d) depth_at[static_cast<std::size_t>(d)] = d * n;
    const int cols = isa == IsaLevel::avx512 ? nchw_gemm::kColsAvx512 : nchw_gemm::kColsAvx2;
    const std::int64_t Q = nchw_gemm::panels_per_block(depth, cols);
    struct Panels;  // the kernel's per-thread panels (a partial last panel)
    nchw_gemm::Args a{};
    a.n = 1, a.g = groups, a.m = m, a.depth = depth, a.columns = n;
    a.in_group = depth * n, a.out_plane = n;
    a.gather = a.scatter = columns.data(), a.depth_at = depth_at.data(), a.depth_stride = n;
    a.a = a_mat, a.a_row_words = depth;
    a.in = in, a.out = out;
    a.panels = reusable_scratch<Panels, std::uint32_t>(
        static_cast<std::size_t>(omp_get_max_threads() * Q * depth * cols));
    a.panels_per_block = Q;
    if (isa == IsaLevel::avx512)
      nchw_gemm::run_avx512(a);
    else
      nchw_gemm::run_avx2(a);
  }
};

// Lane l of d: the alpha x alpha window of the padded input under tile q (image q / tiles, tile q
// % tiles of its plane), channel c of group g.
template <class T>
[[gnu::always_inline]] inline void load_window(const Conv& cv, const float* in, std::int64_t g,
                                               std::int64_t c, std::int64_t q, int l, Lanes* d) {
  constexpr int m = T::m, a = T::a;
  const std::int64_t tw = cv.tiles_w(m), tiles = cv.tiles_h(m) * tw;
  const std::int64_t n = q / tiles, ty = q % tiles / tw, tx = q % tiles % tw;
  const float* src = in + (((n * cv.g + g) * cv.cin + c) * cv.ph + ty * m) * cv.pw + tx * m;
  for (int y = 0; y < a; ++y)
    for (int x = 0; x < a; ++x) d[y * a + x][l] = src[y * cv.pw + x];
}

// The batch of tiles transformed and multiplied at once runs over every image's tiles of a group
// (tile q: image q / tiles, tile q % tiles), so that small planes still make wide GEMMs: a 14x14
// layer has 16 F(4x4) tiles an image, and per-image batches made 36 GEMMs 16 columns wide.
template <class T>
void run_conv(const Conv& cv, const float* in, const float* U, float* out, float* V, float* M) {
  constexpr int m = T::m, a = T::a, a2 = a * a;
  const std::int64_t th = cv.tiles_h(m), tw = cv.tiles_w(m), tiles = th * tw;
  const std::int64_t total = cv.n * tiles;
  GroupedGemm gemm;
  for (std::int64_t g = 0; g < cv.g; ++g)
    for (std::int64_t t0 = 0; t0 < total; t0 += kTileBatch) {
      const std::int64_t tb = std::min(kTileBatch, total - t0);
      const std::int64_t lane_blocks = (tb + kLanes - 1) / kLanes;
      // Input tiles, kLanes of the batch at a time (the last block's extra lanes repeat its last
      // tile and are not stored).
#pragma omp parallel for collapse(2)
      for (std::int64_t c = 0; c < cv.cin; ++c)
        for (std::int64_t b = 0; b < lane_blocks; ++b) {
          const std::int64_t i0 = b * kLanes;
          const int lanes = lanes_at(i0, tb);
          alignas(32) Lanes d[36], v[36];
          for (int l = 0; l < kLanes; ++l)
            load_window<T>(cv, in, g, c, t0 + i0 + std::min(l, lanes - 1), l, d);
          sandwich<a, a, a, a>(T::bt, d, T::bt, v);
          store_lanes(v, a2, V + c * tb + i0, cv.cin * tb, lanes);
        }
      gemm.run(a2, cv.kout, cv.cin, tb, U + g * a2 * cv.kout * cv.cin, V, M);
      // Output tiles, kLanes at a time likewise.
#pragma omp parallel for collapse(2)
      for (std::int64_t k = 0; k < cv.kout; ++k)
        for (std::int64_t b = 0; b < lane_blocks; ++b) {
          const std::int64_t i0 = b * kLanes;
          const int lanes = lanes_at(i0, tb);
          alignas(32) Lanes mm[36], y[16];
          load_lanes(M + k * tb + i0, a2, cv.kout * tb, lanes, mm);
          sandwich<m, a, a, m>(T::at, mm, T::at, y);
          for (int l = 0; l < lanes; ++l) {
            const std::int64_t q = t0 + i0 + l;
            const std::int64_t n = q / tiles, t = q % tiles, ty = t / tw, tx = t % tw;
            float* outg = out + (n * cv.g + g) * cv.kout * cv.oh * cv.ow;
            for (int yy = 0; yy < m && ty * m + yy < cv.oh; ++yy)
              for (int xx = 0; xx < m && tx * m + xx < cv.ow; ++xx)
                outg[(k * cv.oh + ty * m + yy) * cv.ow + tx * m + xx] = y[yy * m + xx][l];
          }
        }
    }
}

// Backward-weights reduces over every image's tiles, in chunks of at most this many floats for
// U (alpha^2 x K x tiles) and V (alpha^2 x tiles x C) each, and at most kWeightsTiles tiles (the
// GEMM's per-thread panel holds a chunk's tiles for its columns); the chunks' products are added
// in chunk order, so the bits do not depend on the thread count.
constexpr std::int64_t kWeightsChunkFloats = std::int64_t{8} << 20, kWeightsTiles = 16384;
std::int64_t weights_chunk(const Conv& cv, int m) {
  const std::int64_t a2 = (m + 2) * (m + 2), total = cv.n * cv.tiles_h(m) * cv.tiles_w(m);
  const std::int64_t fit = kWeightsChunkFloats / (a2 * std::max(cv.kout, cv.cin));
  return std::min({total, kWeightsTiles, std::max<std::int64_t>(fit, 64)});
}

// dW = G^T [sum over tiles (A dy A^T) . (B^T x B)] G for F(T::m x T::m, 3 x 3): x's tiles (V,
// alpha^2 x tiles x C) and dy's (U, alpha^2 x K x tiles, zero past oh and ow) transformed, the
// alpha^2 products M = U V reduced over the chunk's tiles by the grouped GEMM, then each filter
// transformed back. `in` is x zero-padded as the forward pass reads it.
template <class T>
void run_weights(const Conv& cv, const float* in, const float* dy, float* dw, float* U, float* V,
                 float* M, float* Mc, std::int64_t chunk) {
  constexpr int m = T::m, a = T::a, a2 = a * a;
  const std::int64_t tw = cv.tiles_w(m), tiles = cv.tiles_h(m) * tw, total = cv.n * tiles;
  const std::int64_t c_blocks = (cv.cin + kLanes - 1) / kLanes;
  GroupedGemm gemm;
  for (std::int64_t g = 0; g < cv.g; ++g) {
    for (std::int64_t t0 = 0; t0 < total; t0 += chunk) {
      const std::int64_t tc = std::min(chunk, total - t0);
      // x's tiles, kLanes channels at a time (a ragged block's extra lanes repeat its last
      // channel and are not stored).
#pragma omp parallel for collapse(2)
      for (std::int64_t t = 0; t < tc; ++t)
        for (std::int64_t b = 0; b < c_blocks; ++b) {
          const std::int64_t c0 = b * kLanes;
          const int lanes = lanes_at(c0, cv.cin);
          alignas(32) Lanes d[36], v[36];
          for (int l = 0; l < kLanes; ++l)
            load_window<T>(cv, in, g, c0 + std::min(l, lanes - 1), t0 + t, l, d);
          sandwich<a, a, a, a>(T::bt, d, T::bt, v);
          store_lanes(v, a2, V + t * cv.cin + c0, tc * cv.cin, lanes);
        }
      // dy's tiles, kLanes tiles at a time.
      const std::int64_t t_blocks = (tc + kLanes - 1) / kLanes;
#pragma omp parallel for collapse(2)
      for (std::int64_t k = 0; k < cv.kout; ++k)
        for (std::int64_t b = 0; b < t_blocks; ++b) {
          const std::int64_t i0 = b * kLanes;
          const int lanes = lanes_at(i0, tc);
          alignas(32) Lanes e[16], u[36];
          for (int l = 0; l < kLanes; ++l) {
            const std::int64_t q = t0 + i0 + std::min(l, lanes - 1);
            const std::int64_t n = q / tiles, ty = q % tiles / tw, tx = q % tiles % tw;
            const float* src = dy + ((n * cv.g + g) * cv.kout + k) * cv.oh * cv.ow;
            for (int yy = 0; yy < m; ++yy)
              for (int xx = 0; xx < m; ++xx) {
                const std::int64_t oy = ty * m + yy, ox = tx * m + xx;
                e[yy * m + xx][l] = oy < cv.oh && ox < cv.ow ? src[oy * cv.ow + ox] : 0.f;
              }
          }
          sandwich<a, m, m, a>(T::a_mat, e, T::a_mat, u);
          store_lanes(u, a2, U + k * tc + i0, cv.kout * tc, lanes);
        }
      gemm.run(a2, cv.kout, tc, cv.cin, U, V, t0 == 0 ? M : Mc);
      if (t0 > 0) {
        const std::int64_t size = a2 * cv.kout * cv.cin;
#pragma omp parallel for
        for (std::int64_t i = 0; i < size; ++i) M[i] += Mc[i];
      }
    }
    // Each filter back, kLanes channels at a time.
#pragma omp parallel for collapse(2)
    for (std::int64_t k = 0; k < cv.kout; ++k)
      for (std::int64_t b = 0; b < c_blocks; ++b) {
        const std::int64_t c0 = b * kLanes;
        const int lanes = lanes_at(c0, cv.cin);
        alignas(32) Lanes mm[36], r[9];
        load_lanes(M + k * cv.cin + c0, a2, cv.kout * cv.cin, lanes, mm);
        sandwich<3, a, a, 3>(T::gt, mm, T::gt, r);
        for (int l = 0; l < lanes; ++l) {
          float* to = dw + ((g * cv.kout + k) * cv.cin + c0 + l) * 9;
          for (int i = 0; i < 9; ++i) to[i] = r[i][l];
        }
      }
  }
}

// The forward-form convolution of a problem: forward itself (and backward-weights, whose x and dy
// are forward's x and y), or backward-data as dy (K channels) convolved with flipped, transposed
// filters into dx (C channels).
Conv conv_of(const Problem& p, int m, std::int64_t& pad_top, std::int64_t& pad_left) {
  const Geometry G = detail::geometry(p);
  Conv cv{};
  cv.n = G.n;
  cv.g = G.g;
  if (p.direction != Direction::backward_data) {
    cv.cin = G.cg;
    cv.kout = G.kg;
    cv.oh = G.oh;
    cv.ow = G.ow;
    pad_top = G.ph;
    pad_left = G.pw;
  } else {
    cv.cin = G.kg;
    cv.kout = G.cg;
    cv.oh = G.ih;
    cv.ow = G.iw;
    pad_top = 2 - G.ph;
    pad_left = 2 - G.pw;
  }
  cv.ph = cv.tiles_h(m) * m + 2;
  cv.pw = cv.tiles_w(m) * m + 2;
  return cv;
}

}  // namespace

std::string_view WinogradSolver::id() const {
  return m_ == 2 ? "cpu:winograd:f2x2_3x3" : "cpu:winograd:f4x4_3x3";
}

Status WinogradSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.spatial_dims == 3) return not_applicable("1D and 2D only (3D Winograd is not implemented)");
  if (p.filter[1] != 3 || p.filter[2] != 3)
    return not_applicable(fmt::format("needs a 3x3 filter (got {}x{})", p.filter[1], p.filter[2]));
  if (p.stride[1] != 1 || p.stride[2] != 1) return not_applicable("needs stride 1");
  if (p.dilation[1] != 1 || p.dilation[2] != 1) return not_applicable("needs dilation 1");
  if (p.direction == Direction::backward_data) {
    const Padding fp = forward_padding(p);
    if (p.pad_begin[1] > 2 || p.pad_begin[2] > 2 || fp.end[1] > 2 || fp.end[2] > 2) {
      return not_applicable(
          "backward-data needs paddings <= 2 (it runs as a forward pass with 2 - padding)");
    }
  }
  // Its buffers (the padded copy of the forward-form input, the transformed filters, the
  // transformed tiles) over 2^32 elements are declined, and so are channel counts whose panel in
  // the grouped GEMM (a reduction over them x 48 columns, per thread) would exceed 16 MiB, as
  // cpu:nchw_gemm declines them. Each factor is bounded first so that no product overflows.
  std::int64_t pt, pl;
  const Conv cv = conv_of(p, m_, pt, pl);
  const std::int64_t a2 = (m_ + 2) * (m_ + 2);
  constexpr std::int64_t kLimit = std::int64_t{4} << 30;
  constexpr std::int64_t kMostChannels = (std::int64_t{16} << 20) / (4 * nchw_gemm::kColsAvx512);
  if (cv.cin > kMostChannels || cv.kout > kMostChannels)
    return not_applicable(fmt::format(
        "{} -> {} channels per group: more than {}, the grouped GEMM's per-thread panel would "
        "exceed 16 MiB",
        cv.cin, cv.kout, kMostChannels));
  if (bounded_product({cv.n, cv.g, cv.cin, cv.oh + m_ + 2, cv.ow + m_ + 2}, kLimit) > kLimit ||
      bounded_product({cv.g, a2, cv.kout, cv.cin}, kLimit) > kLimit)
    return not_applicable("its padded input or its transformed filters over 2^32 elements");
  if (isa_level() == IsaLevel::baseline && !blas::available())
    return not_applicable(blas::describe());
  return Status::ok();
}

Accuracy WinogradSolver::accuracy(const Problem&) const {
  Accuracy a{false, m_ == 2 ? 2.0 : 8.0};
  // A tile's transforms mix its neighbours' inputs into each output (even an output whose own
  // window is all padding gets rounding error): per-element bounds use the output's largest M_i.
  a.local_errors = false;
  return a;
}

StagingSpec WinogradSolver::staging(const Problem&) const {
  return StagingSpec{Order::channels_first, Order::channels_first, Padding{}, false};
}

void WinogradSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  std::int64_t pt, pl;
  const Conv cv = conv_of(p, m_, pt, pl);
  const std::int64_t a2 = (m_ + 2) * (m_ + 2);
  layout.add(cv.n * cv.g * cv.cin * cv.ph * cv.pw);  // padded input
  if (p.direction == Direction::backward_weights) {
    const std::int64_t chunk = weights_chunk(cv, m_);
    const bool chunks = chunk < cv.n * cv.tiles_h(m_) * cv.tiles_w(m_);
    layout.add(a2 * cv.kout * chunk);                // U
    layout.add(a2 * chunk * cv.cin);                 // V
    layout.add(a2 * cv.kout * cv.cin);               // M
    layout.add(chunks ? a2 * cv.kout * cv.cin : 0);  // a later chunk's products
    return;
  }
  const std::int64_t tb = std::min(kTileBatch, cv.n * cv.tiles_h(m_) * cv.tiles_w(m_));
  layout.add(cv.g * a2 * cv.kout * cv.cin);  // U
  layout.add(a2 * cv.cin * tb);              // V
  layout.add(a2 * cv.kout * tb);             // M
}

namespace {

// The filters transformed (forward's, or backward-data's rotated and transposed) and the
// forward-form convolution run, for F(T::m x T::m, 3 x 3).
template <class T>
void transform_and_run(const Conv& cv, bool fwd, const StagedTensors& t, const float* in, float* U,
                       float* V, float* M) {
  const float* w = t.w;
  const std::int64_t cg = t.geo.cg, kg = t.geo.kg;
  if (fwd) {
    transform_filters<T>(
        cv,
        [&](std::int64_t g, std::int64_t k, std::int64_t c, float* f) {
          std::memcpy(f, w + ((g * kg + k) * cg + c) * 9, 9 * sizeof(float));
        },
        U);
    run_conv<T>(cv, in, U, t.y, V, M);
  } else {
    // Forward-form filter (c <- k): w[k][c] rotated by 180 degrees.
    transform_filters<T>(
        cv,
        [&](std::int64_t g, std::int64_t c, std::int64_t k, float* f) {
          const float* s = w + ((g * kg + k) * cg + c) * 9;
          for (int i = 0; i < 9; ++i) f[i] = s[8 - i];
        },
        U);
    run_conv<T>(cv, in, U, t.x, V, M);
  }
}

}  // namespace

Status WinogradSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                               const WorkspaceLayout& layout, int first) const {
  const Geometry& G = t.geo;
  std::int64_t pt, pl;
  const Conv cv = conv_of(p, m_, pt, pl);
  float* in = layout.get(ws, first);
  float* U = layout.get(ws, first + 1);
  float* V = layout.get(ws, first + 2);
  float* M = layout.get(ws, first + 3);
  const bool fwd = p.direction == Direction::forward;
  const bool reads_x = p.direction != Direction::backward_data;
  // Zero-padded copy of the forward-form input (x, or dy for backward-data).
  const float* src = reads_x ? t.x : t.y;
  const std::int64_t sh = reads_x ? G.ih : G.oh, sw = reads_x ? G.iw : G.ow;
  std::memset(in, 0,
              static_cast<std::size_t>(cv.n * cv.g * cv.cin * cv.ph * cv.pw) * sizeof(float));
  // Only the rows and columns the convolution reads (padded rows < oh + 2): with a negative end
  // padding, the rows below would land in the tiles' slack, where an Inf or NaN the convolution
  // never reads would still reach the transforms' sums.
  const std::int64_t rows = std::min(cv.ph, cv.oh + 2), cols = std::min(cv.pw, cv.ow + 2);
#pragma omp parallel for collapse(2)
  for (std::int64_t nc = 0; nc < cv.n * cv.g * cv.cin; ++nc)
    for (std::int64_t y = 0; y < sh; ++y) {
      if (y + pt >= rows) continue;
      for (std::int64_t x = 0; x < sw && x + pl < cols; ++x)
        in[(nc * cv.ph + y + pt) * cv.pw + x + pl] = src[(nc * sh + y) * sw + x];
    }
  if (p.direction == Direction::backward_weights) {
    float* Mc = layout.get(ws, first + 4);
    const std::int64_t chunk = weights_chunk(cv, m_);
    if (m_ == 2)
      run_weights<Transform<2>>(cv, in, t.y, t.w, U, V, M, Mc, chunk);
    else
      run_weights<Transform<4>>(cv, in, t.y, t.w, U, V, M, Mc, chunk);
    return Status::ok();
  }
  if (m_ == 2)
    transform_and_run<Transform<2>>(cv, fwd, t, in, U, V, M);
  else
    transform_and_run<Transform<4>>(cv, fwd, t, in, U, V, M);
  return Status::ok();
}

}  // namespace convguard::cpu
