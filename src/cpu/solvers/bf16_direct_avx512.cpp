// cpu:bf16_direct's kernel (bf16_direct.hpp); compiled with -mavx512f -mavx512bf16.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "cpu/solvers/bf16_direct.hpp"

namespace convguard::cpu::bf16 {
namespace {

using detail::Geometry;

struct Args {
  const std::uint32_t* x;          // the tile's first output pixel's first tap, in pairs
  std::int64_t x_step;             // pairs between adjacent output pixels (stride * C2)
  const std::int64_t* tap_offset;  // pairs from a pixel's first tap to each tap
  std::int64_t taps, c2;
  const std::uint32_t* w;  // the first 16-channel block of the tile
  std::int64_t w_block;    // pairs between 16-channel blocks (taps * C2 * 16)
  float* y;                // the tile's first output pixel, first channel
  std::int64_t k;          // floats between output pixels
  __mmask16 last_mask;     // valid lanes of the tile's last block
};

// NI output pixels by NJ blocks of 16 output channels, all in registers.
template <int NI, int NJ>
void tile(const Args& a) {
  __m512 acc[NI][NJ];
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::int64_t t = 0; t < a.taps; ++t) {
    const std::uint32_t* x = a.x + a.tap_offset[t];
    const std::uint32_t* w = a.w + t * a.c2 * 16;
    for (std::int64_t c = 0; c < a.c2; ++c) {
      __m512bh wv[NJ];
      for (int j = 0; j < NJ; ++j) wv[j] = (__m512bh)_mm512_loadu_si512(w + j * a.w_block + c * 16);
      for (int i = 0; i < NI; ++i) {
        const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[i * a.x_step + c]));
        for (int j = 0; j < NJ; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], xv, wv[j]);
      }
    }
  }
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) {
      float* out = a.y + i * a.k + j * 16;
      if (j == NJ - 1)
        _mm512_mask_storeu_ps(out, a.last_mask, acc[i][j]);
      else
        _mm512_storeu_ps(out, acc[i][j]);
    }
}

using TileFn = void (*)(const Args&);

template <int NI>
constexpr TileFn pick(int nj) {
  return nj == 1 ? tile<NI, 1> : nj == 2 ? tile<NI, 2> : nj == 3 ? tile<NI, 3> : tile<NI, 4>;
}

TileFn pick(int ni, int nj) {
  switch (ni) {
    case 1:
      return pick<1>(nj);
    case 2:
      return pick<2>(nj);
    case 3:
      return pick<3>(nj);
    case 4:
      return pick<4>(nj);
    case 5:
      return pick<5>(nj);
    default:
      return pick<6>(nj);
  }
}

constexpr int kPixels = 6, kBlocks = 4;

}  // namespace

void forward_avx512(const Geometry& G, const Sizes5& xs, const std::uint32_t* x,
                    const std::uint32_t* w, const RowSink& out) {
  const std::int64_t C2 = (G.c() + 1) / 2, K = G.k(), kblocks = (K + 15) / 16;
  std::vector<std::int64_t> tap_offset;
  for (std::int64_t a = 0; a < G.kd; ++a)
    for (std::int64_t b = 0; b < G.kh; ++b)
      for (std::int64_t e = 0; e < G.kw; ++e)
        tap_offset.push_back(((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C2);
#pragma omp parallel
  {
    std::vector<float> out_row_buffer(static_cast<std::size_t>(G.ow * K));
    float* out_row = out_row_buffer.data();
#pragma omp for collapse(3) schedule(static)
    for (std::int64_t n = 0; n < G.n; ++n)
      for (std::int64_t od = 0; od < G.od; ++od)
        for (std::int64_t oh = 0; oh < G.oh; ++oh) {
          const std::uint32_t* row = x + ((n * xs.d + od * G.sd) * xs.h + oh * G.sh) * xs.w * C2;
          for (std::int64_t kb = 0; kb < kblocks; kb += kBlocks) {
            const int nj = static_cast<int>(std::min<std::int64_t>(kBlocks, kblocks - kb));
            const std::int64_t last = K - (kb + nj - 1) * 16;
            Args a{};
            a.x_step = G.sw * C2;
            a.tap_offset = tap_offset.data();
            a.taps = G.taps();
            a.c2 = C2;
            a.w = w + kb * G.taps() * C2 * 16;
            a.w_block = G.taps() * C2 * 16;
            a.k = K;
            a.last_mask = static_cast<__mmask16>(last >= 16 ? 0xffff : (1u << last) - 1);
            for (std::int64_t ow = 0; ow < G.ow; ow += kPixels) {
              const int ni = static_cast<int>(std::min<std::int64_t>(kPixels, G.ow - ow));
              a.x = row + ow * G.sw * C2;
              a.y = out_row + ow * K + kb * 16;
              pick(ni, nj)(a);
            }
          }
          out(n, od, oh, out_row);
        }
  }
}

}  // namespace convguard::cpu::bf16
