// cpu:bf16_direct's backward-weights kernel (bf16_kernels.hpp: no library templates here);
// compiled with -mavx512f -mavx512bf16.
#include <immintrin.h>

#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_tiles.hpp"

namespace convguard::cpu::bf16 {
namespace {

using detail::Geometry;

inline std::int64_t smaller(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

struct Args {
  const std::uint32_t* x;     // x pairs at the chunk's first row's first pixel pair
  const std::int64_t* col;    // per tile column: pairs from a pixel pair's base to its x pair
  std::int64_t x_pair_step;   // x pairs between adjacent output pixel pairs (2 * stride * C)
  const std::int64_t* row_x;  // per row of the chunk: x pairs from `x` to the row's first pixel
  const std::uint32_t* dy;    // dy pairs at the chunk's first row, the tile's first channel
  std::int64_t rows, row_pairs, kp;  // rows in the chunk, pixel pairs per row, padded K
  bool odd_row;                      // OW is odd: each row's last pair is one pixel
  float* dw;                         // dW^T [Q][Kp] at the tile's first column and channel
};

// NI columns of dW^T (filter tap and input channel) by NJ blocks of 16 output channels: one
// broadcast x pair per column and one dy vector per block per pixel pair.
template <int NI, int NJ>
struct Tile {
  static void run(const Args& a);
};

template <int NI, int NJ>
void Tile<NI, NJ>::run(const Args& a) {
  __m512 acc[NI][NJ];
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) acc[i][j] = _mm512_loadu_ps(a.dw + i * a.kp + j * 16);
  std::int64_t col[NI];
  for (int i = 0; i < NI; ++i) col[i] = a.col[i];
  // One pixel pair; `keep` masks the x pairs (all bits, or the low half only).
  const auto step = [&](const std::uint32_t* x, const std::uint32_t* dy, std::uint32_t keep) {
    __m512bh dv[NJ];
    for (int j = 0; j < NJ; ++j) dv[j] = (__m512bh)_mm512_loadu_si512(dy + j * 16);
    for (int i = 0; i < NI; ++i) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[col[i]] & keep));
      for (int j = 0; j < NJ; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], xv, dv[j]);
    }
  };
  // An odd row's last pair has no second pixel: its dy half is zero, and its x half (an element
  // no window of that pixel reads, maybe Inf or NaN) is dropped so that 0 * Inf adds no NaN.
  const std::int64_t whole = a.odd_row ? a.row_pairs - 1 : a.row_pairs;
  const std::uint32_t* dy = a.dy;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::uint32_t* x = a.x + a.row_x[r];
    for (std::int64_t m = 0; m < whole; ++m, x += a.x_pair_step, dy += a.kp) step(x, dy, ~0u);
    if (a.odd_row) {
      step(x, dy, 0xffffu);
      dy += a.kp;
    }
  }
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) _mm512_storeu_ps(a.dw + i * a.kp + j * 16, acc[i][j]);
}

constexpr int kColumns = 6, kBlocks = 4;
// Pixel pairs per chunk: the chunk's dy and x rows stay in L2 while every tile passes over them.
constexpr std::int64_t kChunkPairs = 512;

}  // namespace

void backward_weights_avx512(const BackwardWeightsArgs& b) {
  const Geometry& G = b.G;
  const std::int64_t C = G.c(), K = G.k(), kp = padded16(K), kblocks = kp / 16;
  const std::int64_t Q = G.taps() * C, row_pairs = pairs(G.ow);
  const std::int64_t rows = G.n * G.od * G.oh;
  float* dwt = b.dwt;
  for (std::int64_t i = 0; i < Q * kp; ++i) dwt[i] = 0.0f;
  const std::int64_t chunk_rows = row_pairs < kChunkPairs ? kChunkPairs / row_pairs : 1;
  const std::int64_t kgroups = (kblocks + kBlocks - 1) / kBlocks;
  const std::int64_t qgroups = (Q + kColumns - 1) / kColumns, tiles = kgroups * qgroups;
  // Each tile owns its dW elements and adds the chunks in order: the same bits on every thread
  // count. A static schedule hands each thread the same tiles in every chunk, so no barrier.
#pragma omp parallel
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const std::int64_t chunk = smaller(chunk_rows, rows - r0);
#pragma omp for schedule(static) nowait
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::int64_t kg = t / qgroups, q0 = (t % qgroups) * kColumns;
      const int nj = static_cast<int>(smaller(kBlocks, kblocks - kg * kBlocks));
      const int ni = static_cast<int>(smaller(kColumns, Q - q0));
      Args a{};
      a.x = b.x;
      a.col = b.col + q0;
      a.x_pair_step = 2 * G.sw * C;
      a.row_x = b.row_x + r0;
      a.dy = b.dy + r0 * row_pairs * kp + kg * kBlocks * 16;
      a.rows = chunk;
      a.row_pairs = row_pairs;
      a.kp = kp;
      a.odd_row = G.ow % 2 != 0;
      a.dw = dwt + q0 * kp + kg * kBlocks * 16;
      pick_tile<Tile>(ni, nj)(a);
    }
  }
}

}  // namespace convguard::cpu::bf16
