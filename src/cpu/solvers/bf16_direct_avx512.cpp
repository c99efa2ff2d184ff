// cpu:bf16_direct's forward kernel and bf16 stores (bf16_kernels.hpp: no library templates
// here); compiled with -mavx512f -mavx512bw -mavx512vl -mavx512bf16 (every CPU with AVX512_BF16
// has BW and VL: the masked 16-bit loads and stores of the transposes' ragged edges).
#include <immintrin.h>
#include <omp.h>

// GCC 12's AVX-512 intrinsics pass an undefined vector as the unused merge source, which its
// -W(maybe-)uninitialized reports as a use (a false positive; clang and later GCC do not).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_round_avx512.hpp"
#include "cpu/solvers/bf16_tiles.hpp"
#include "cpu/transpose16.hpp"

namespace convguard::cpu::bf16 {

using avx512::round_one;
using avx512::round_to_bf16;
namespace {

using detail::Geometry;

inline std::int64_t smaller(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

constexpr int kPixels = 6, kBlocks = 4;

struct Args {
  const std::uint32_t* px[kPixels];  // each output pixel's first tap, in pairs (any rows)
  const std::int64_t* tap_offset;    // pairs from a pixel's first tap to each tap
  std::int64_t taps, c2;
  const std::uint32_t* w;  // the first 16-channel block of the tile
  std::int64_t w_block;    // pairs between 16-channel blocks (taps * C2 * 16)
  float* y;                // the tile's first output pixel, first channel
  std::int64_t k;          // floats between output pixels
  __mmask16 last_mask;     // valid lanes of the tile's last block
};

// NI output pixels by NJ blocks of 16 output channels, all in registers.
template <int NI, int NJ>
struct Tile {
  static void run(const Args& a);
};

template <int NI, int NJ>
void Tile<NI, NJ>::run(const Args& a) {
  __m512 acc[NI][NJ];
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::int64_t t = 0; t < a.taps; ++t) {
    const std::uint32_t* x[NI];
    for (int i = 0; i < NI; ++i) x[i] = a.px[i] + a.tap_offset[t];
    const std::uint32_t* w = a.w + t * a.c2 * 16;
    for (std::int64_t c = 0; c < a.c2; ++c) {
      __m512bh wv[NJ];
      for (int j = 0; j < NJ; ++j) wv[j] = (__m512bh)_mm512_loadu_si512(w + j * a.w_block + c * 16);
      for (int i = 0; i < NI; ++i) {
        const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[i][c]));
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

}  // namespace

void forward_avx512(const ForwardArgs& f) {
  const Geometry& G = f.G;
  const Sizes5& xs = f.xs;
  const std::int64_t C2 = pairs(G.c()), K = G.k(), kblocks = blocks16(K);
  const std::int64_t rows = G.n * G.od * G.oh, R = f.rows_per_block;
  const std::int64_t blocks = (rows + R - 1) / R;
  // The first tap of output row r's first pixel.
  const auto row_start = [&](std::int64_t r) {
    const std::int64_t oh = r % G.oh, od = r / G.oh % G.od, n = r / (G.oh * G.od);
    return f.x + ((n * xs.d + od * G.sd) * xs.h + oh * G.sh) * xs.w * C2;
  };
#pragma omp parallel
  {
    float* out = f.rows + omp_get_thread_num() * R * G.ow * K;
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      // The block's pixels in row order, in tiles of 6 that may span rows (a 7-wide row
      // would leave a 1-pixel tile).
      const std::int64_t r0 = b * R, pixels = smaller(R, rows - r0) * G.ow;
      for (std::int64_t kb = 0; kb < kblocks; kb += kBlocks) {
        const int nj = static_cast<int>(smaller(kBlocks, kblocks - kb));
        const std::int64_t last = K - (kb + nj - 1) * 16;
        Args a{};
        a.tap_offset = f.tap_offset;
        a.taps = G.taps();
        a.c2 = C2;
        a.w = f.w + kb * G.taps() * C2 * 16;
        a.w_block = G.taps() * C2 * 16;
        a.k = K;
        a.last_mask = static_cast<__mmask16>(last >= 16 ? 0xffff : (1u << last) - 1);
        for (std::int64_t p0 = 0; p0 < pixels; p0 += kPixels) {
          const int ni = static_cast<int>(smaller(kPixels, pixels - p0));
          for (int i = 0; i < ni; ++i) {
            const std::int64_t p = p0 + i;
            a.px[i] = row_start(r0 + p / G.ow) + p % G.ow * G.sw * C2;
          }
          a.y = out + p0 * K + kb * 16;
          pick_tile<Tile>(ni, nj)(a);
        }
      }
      for (std::int64_t r = r0; r < r0 + pixels / G.ow; ++r) {
        const std::int64_t oh = r % G.oh, od = r / G.oh % G.od, n = r / (G.oh * G.od);
        f.out.store(f.out.context, n, od, oh, out + (r - r0) * G.ow * K);
      }
    }
  }
}

namespace {

inline __mmask16 first(std::int64_t n) {
  return static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1);
}

// rows x cols (each at most 16) 16-bit values at src (rows src_row apart) stored transposed at
// dst (cols x rows, rows dst_row apart); the block's missing rows and columns are masked off, so
// a ragged edge costs a block, not one element at a time.
void transpose_bits16(const std::uint16_t* src, std::int64_t src_row, std::int64_t rows,
                      std::int64_t cols, std::uint16_t* dst, std::int64_t dst_row) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i)
    r[i] = i < rows ? _mm512_castsi512_ps(_mm512_cvtepu16_epi32(
                          _mm256_maskz_loadu_epi16(first(cols), src + i * src_row)))
                    : _mm512_setzero_ps();
  transpose16(r);
  for (int j = 0; j < cols; ++j)
    _mm256_mask_storeu_epi16(dst + j * dst_row, first(rows),
                             _mm512_cvtepi32_epi16(_mm512_castps_si512(r[j])));
}

}  // namespace

void store_bf16_avx512(const float* in, std::int64_t in_row, std::int64_t W, std::int64_t C,
                       std::uint16_t* dst, std::int64_t dc, std::int64_t dw) {
  if (dc == 1) {  // channels-last: 16 channels of a pixel per vector
    for (std::int64_t w = 0; w < W; ++w)
      for (std::int64_t c = 0; c < C; c += 16) {
        const __mmask16 m = first(C - c);
        _mm256_mask_storeu_epi16(dst + w * dw + c, m,
                                 round_to_bf16(_mm512_maskz_loadu_ps(m, in + w * in_row + c)));
      }
    return;
  }
  if (dw == 1) {  // channels-first: 16 x 16 blocks transposed in registers, edges masked
    for (std::int64_t w = 0; w < W; w += 16)
      for (std::int64_t c = 0; c < C; c += 16) {
        const std::int64_t pixels = smaller(16, W - w), channels = smaller(16, C - c);
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = i < pixels ? _mm512_maskz_loadu_ps(first(channels), in + (w + i) * in_row + c)
                            : _mm512_setzero_ps();
        transpose16(r);
        for (int i = 0; i < channels; ++i)
          _mm256_mask_storeu_epi16(dst + (c + i) * dc + w, first(pixels), round_to_bf16(r[i]));
      }
    return;
  }
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t w = 0; w < W; ++w) dst[c * dc + w * dw] = round_one(in[w * in_row + c]);
}

void transpose_words_avx512(const std::uint32_t* src, std::int64_t src_row, std::int64_t rows,
                            std::int64_t cols, std::uint32_t* dst, std::int64_t dst_row) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i)
    r[i] = i < rows ? _mm512_maskz_loadu_ps(first(cols), src + i * src_row) : _mm512_setzero_ps();
  transpose16(r);
  for (int j = 0; j < cols; ++j) _mm512_storeu_ps(dst + j * dst_row, r[j]);
}

void load_bf16_rows_avx512(const std::uint16_t* src, std::int64_t sc, std::int64_t sw,
                           std::int64_t W, std::int64_t C, std::uint16_t* out) {
  if (sw == 1) {  // channels-first: 16 x 16 blocks transposed in registers, edges masked
    for (std::int64_t c = 0; c < C; c += 16)
      for (std::int64_t w = 0; w < W; w += 16)
        transpose_bits16(src + c * sc + w, sc, smaller(16, C - c), smaller(16, W - w),
                         out + w * C + c, C);
    return;
  }
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t w = 0; w < W; ++w) out[w * C + c] = src[c * sc + w * sw];
}

void transpose_pairs_avx512(const std::uint16_t* src, std::int64_t src_row, std::int64_t rows,
                            std::int64_t count, std::uint32_t* dst, std::int64_t dst_row) {
  // 32 values of a row are 16 pair words already: one masked 16-bit load (any alignment, no
  // read past the row's end, zeros there) per row, then a 16 x 16 word transpose.
  for (std::int64_t w = 0; w < count; w += 32) {
    const std::int64_t n = smaller(32, count - w);
    const auto mask = static_cast<__mmask32>(n >= 32 ? 0xffffffffu : (1u << n) - 1);
    __m512 r[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(mask, src + i * src_row + w))
                      : _mm512_setzero_ps();
    transpose16(r);
    for (std::int64_t j = 0; j < (n + 1) / 2; ++j)
      _mm512_storeu_ps(dst + (w / 2 + j) * dst_row, r[j]);
  }
}

namespace {

// _mm512_permutex2var_epi16's indices for a chunk's pair rows: word t of the low half (pixels
// 0-15) is element t of the even channel (first operand) in its low 16 bits and of the odd channel
// (second operand, indices from 32) in its high; the high half the same for pixels 16-31.
alignas(64) constexpr std::uint16_t kPairLowHalf[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                        37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                        11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
alignas(64) constexpr std::uint16_t kPairHighHalf[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                                         53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                                         27, 59, 28, 60, 29, 61, 30, 62, 31, 63};

// A run of a chunk's pixels whose x elements lie `sw` apart from src (channel 0): pixels t0 to
// t0 + len - 1 of the chunk.
struct PixelRun {
  const std::uint16_t* src;
  std::int64_t t0, len;
};

// The runs of pixels [v0, v1): one per image where x is dense, else one per output row.
std::int64_t chunk_runs(const AmxPointwiseForwardArgs& a, std::int64_t v0, std::int64_t v1,
                        PixelRun* runs) {
  const std::int64_t plane = a.od * a.oh * a.ow;
  std::int64_t count = 0;
  for (std::int64_t v = v0; v < v1;) {
    const std::int64_t n = v / plane, p = v % plane;
    const std::uint16_t* image = a.x + n * a.xs[0];
    std::int64_t len;
    if (a.x_dense) {
      len = smaller(plane - p, v1 - v);
      runs[count] = {image + p, v - v0, len};
    } else {
      const std::int64_t w = p % a.ow, h = p / a.ow % a.oh, d = p / (a.ow * a.oh);
      len = smaller(a.ow - w, v1 - v);
      runs[count] = {image + d * a.sd * a.xs[2] + h * a.sh * a.xs[3] + w * a.sw, v - v0, len};
    }
    ++count;
    v += len;
  }
  return count;
}

// One channel's 32 pixels of a chunk (zero past its runs), channel_offset elements past the runs'
// channel 0. Masked loads read only the elements the pixels use, so no load crosses x's end.
__m512i channel_row(const PixelRun* runs, std::int64_t count, std::int64_t sw,
                    std::int64_t channel_offset) {
  if (count == 1 && runs[0].len == 32 && sw == 1)
    return _mm512_loadu_si512(runs[0].src + channel_offset);
  alignas(64) std::uint16_t row[32] = {};
  for (std::int64_t r = 0; r < count; ++r) {
    const std::uint16_t* src = runs[r].src + channel_offset;
    const std::int64_t len = runs[r].len;
    const __mmask32 keep = static_cast<__mmask32>((std::uint64_t{1} << len) - 1);
    if (sw == 1) {
      _mm512_mask_storeu_epi16(row + runs[r].t0, keep, _mm512_maskz_loadu_epi16(keep, src));
    } else if (sw == 2) {
      // Elements 0, 2, ..., 2 (len - 1): the low halves of 32-bit lanes, 2 len - 1 elements read.
      const std::int64_t used = 2 * len - 1;
      const __mmask32 m0 = static_cast<__mmask32>((std::uint64_t{1} << smaller(used, 32)) - 1);
      const __mmask32 m1 =
          used > 32 ? static_cast<__mmask32>((std::uint64_t{1} << (used - 32)) - 1) : 0;
      const __m256i lo = _mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi16(m0, src));
      const __m256i hi = _mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi16(m1, src + 32));
      _mm512_mask_storeu_epi16(row + runs[r].t0, keep,
                               _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
    } else {
      for (std::int64_t t = 0; t < len; ++t) row[runs[r].t0 + t] = src[t * sw];
    }
  }
  return _mm512_load_si512(row);
}

}  // namespace

void pair_pointwise_chunks_avx512(const AmxPointwiseForwardArgs& a, std::int64_t first,
                                  std::int64_t count, std::uint32_t* dst) {
  PixelRun runs[16][32];
  std::int64_t run_count[16];
  for (std::int64_t j = 0; j < count; ++j) {
    const std::int64_t v0 = (first + j) * 32;
    run_count[j] = chunk_runs(a, v0, smaller(v0 + 32, a.pixels), runs[j]);
  }
  const __m512i lo_idx = _mm512_load_si512(kPairLowHalf), hi_idx = _mm512_load_si512(kPairHighHalf);
  const std::int64_t pairs_padded = a.pair_blocks * 16;
  // Channel by channel over the whole group, so that each channel's pixels are read as one
  // stream. (Software prefetches of the channels a few pairs ahead, into L2, made it slower on
  // session 29's Xeon: docs/perf.md.)
  for (std::int64_t cp = 0; cp < pairs_padded; ++cp) {
    const std::int64_t c0 = 2 * cp;
    for (std::int64_t j = 0; j < count; ++j) {
      const __m512i even = c0 < a.c ? channel_row(runs[j], run_count[j], a.sw, c0 * a.xs[1])
                                    : _mm512_setzero_si512();
      const __m512i odd = c0 + 1 < a.c
                              ? channel_row(runs[j], run_count[j], a.sw, (c0 + 1) * a.xs[1])
                              : _mm512_setzero_si512();
      std::uint32_t* row = dst + j * a.chunk_words + (cp / 16) * 512 + (cp % 16) * 16;
      _mm512_storeu_si512(row, _mm512_permutex2var_epi16(even, lo_idx, odd));
      _mm512_storeu_si512(row + 256, _mm512_permutex2var_epi16(even, hi_idx, odd));
    }
  }
}

}  // namespace convguard::cpu::bf16
