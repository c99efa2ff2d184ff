// The AMX kernels (bf16_kernels.hpp: no library templates here), compiled with -mamx-tile
// -mamx-bf16 -mavx512f: cpu:bf16_direct:amx_bf16's forward and backward-weights, and
// cpu:bf16_planar:amx_bf16's forward. What follows is the first.
//
// AMX multiplies whole tiles: tdpbf16ps adds a 16 x 32 bf16 tile of A times a 32 x 16 bf16 tile
// of B (stored as 16 rows of 16 bf16 pairs) into a 16 x 16 fp32 tile. The pair layouts of
// cpu:bf16_direct are those tiles already: a row of A is one output pixel's 16 consecutive x
// words (32 input channels, or several taps' channels where the taps are adjacent), loaded
// straight from the padded x at the pixels' stride, and a B tile is 16 consecutive rows of the
// packed filter (fewer words and rows where a whole run is shorter: configure_tiles). Eight tile
// registers: four accumulators (2 pixel tiles x 2 channel blocks, 32 pixels by 32 output channels),
// two A and two B, so each step loads 4 tiles for 4 products.
#include <immintrin.h>
#include <omp.h>

#include "cpu/solvers/bf16_kernels.hpp"

namespace convguard::cpu::bf16 {
namespace {

using detail::Geometry;

inline std::int64_t smaller(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

// The 64-byte operand of ldtilecfg (palette 1).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

// Every tile 16 rows of 64 bytes: accumulators 0-3 (tile 2 * i + j: pixel tile i, channel block
// j), A tiles 4-5, B tiles 6-7; except that where a run is shorter than a tile (`pairs` < 16
// words: small C, conv1's 7 taps x 2 pairs), the A tiles' rows are `pairs` words and the B tiles
// `pairs` rows, so that a tile load reads the run alone, in place (16 words would read past the
// window into the next pixel's words, so each A tile was copied out first: conv1's every tile).
// Tile configuration is per thread.
void configure_tiles(int pairs = 16) {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = 16;
    c.bytes_per_row[t] = 64;
  }
  for (int t = 4; t < 6; ++t) c.bytes_per_row[t] = static_cast<std::uint16_t>(4 * pairs);
  for (int t = 6; t < 8; ++t) c.rows[t] = static_cast<std::uint8_t>(pairs);
  _tile_loadconfig(&c);
}

struct Block {
  const std::uint32_t* a[2];  // each pixel tile's first pixel's first tap
  std::int64_t a_stride;      // bytes between a tile's pixels
  const std::uint32_t* w;     // the first 16-lane block's rows
  std::int64_t w_block;       // words between 16-lane blocks
  const AmxSegment* segments;
  std::int64_t segment_count, full, tail;  // per segment: whole tiles, words in the last one
  std::uint32_t* stage;                    // 512 words, each row written whole
  float* y;                                // 32 pixels x 32 channels, rows y_stride bytes apart
  std::int64_t y_stride;
};

// NA pixel tiles by NB channel blocks.
template <int NA, int NB>
void run_block(const Block& b) {
  _tile_zero(0);
  if constexpr (NB == 2) _tile_zero(1);
  if constexpr (NA == 2) {
    _tile_zero(2);
    if constexpr (NB == 2) _tile_zero(3);
  }
  const std::int64_t pixel_words = b.a_stride / 4;
  const auto mask = static_cast<__mmask16>((1u << b.tail) - 1);
  for (std::int64_t s = 0; s < b.segment_count; ++s) {
    const std::uint32_t* a0 = b.a[0] + b.segments[s].x_offset;
    const std::uint32_t* a1 = NA == 2 ? b.a[1] + b.segments[s].x_offset : a0;
    const std::uint32_t* w = b.w + b.segments[s].w_row * 16;
    for (std::int64_t j = 0; j <= b.full; ++j) {
      if (j < b.full) {
        _tile_loadd(4, a0 + 16 * j, b.a_stride);
        if constexpr (NA == 2) _tile_loadd(5, a1 + 16 * j, b.a_stride);
      } else {
        if (!b.tail) break;
        if (b.full == 0) {  // the tiles are configured to the run's words (configure_tiles)
          _tile_loadd(4, a0, b.a_stride);
          if constexpr (NA == 2) _tile_loadd(5, a1, b.a_stride);
        } else {
          // The run's last words: a tile load would read past the window into the next pixel's
          // words, which the zero filter rows cancel only while they are finite (Inf * 0 is
          // NaN), so copy them out.
          for (std::int64_t i = 0; i < 16; ++i) {
            _mm512_storeu_si512(b.stage + 16 * i,
                                _mm512_maskz_loadu_epi32(mask, a0 + 16 * j + i * pixel_words));
            if constexpr (NA == 2)
              _mm512_storeu_si512(b.stage + 256 + 16 * i,
                                  _mm512_maskz_loadu_epi32(mask, a1 + 16 * j + i * pixel_words));
          }
          _tile_loadd(4, b.stage, 64);
          if constexpr (NA == 2) _tile_loadd(5, b.stage + 256, 64);
        }
      }
      _tile_loadd(6, w + 256 * j, 64);
      if constexpr (NB == 2) _tile_loadd(7, w + b.w_block + 256 * j, 64);
      // The next step's filter tiles (the next 1 KiB of each block's rows, the next segment's
      // first tile after a segment's last) into L1 while these products run: a reduction's
      // filter tiles do not stay in L1 from one pixel tile to the next (72 KiB on res3's 3x3).
      // 0.89x the AMX pass's time over ResNet-50 layers (docs/perf/2026-12-01-session25-emr
      // call7, a noisy host); prefetching the next x tiles too gained nothing more.
      for (int line = 0; line < 16; ++line) {
        _mm_prefetch(reinterpret_cast<const char*>(w + 256 * (j + 1) + 16 * line), _MM_HINT_T0);
        if constexpr (NB == 2)
          _mm_prefetch(reinterpret_cast<const char*>(w + b.w_block + 256 * (j + 1) + 16 * line),
                       _MM_HINT_T0);
      }
      _tile_dpbf16ps(0, 4, 6);
      if constexpr (NB == 2) _tile_dpbf16ps(1, 4, 7);
      if constexpr (NA == 2) {
        _tile_dpbf16ps(2, 5, 6);
        if constexpr (NB == 2) _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
  auto* y = reinterpret_cast<char*>(b.y);
  _tile_stored(0, y, b.y_stride);
  if constexpr (NB == 2) _tile_stored(1, y + 64, b.y_stride);
  if constexpr (NA == 2) {
    _tile_stored(2, y + 16 * b.y_stride, b.y_stride);
    if constexpr (NB == 2) _tile_stored(3, y + 16 * b.y_stride + 64, b.y_stride);
  }
}

void run_block(int na, int nb, const Block& b) {
  if (na == 2)
    nb == 2 ? run_block<2, 2>(b) : run_block<2, 1>(b);
  else
    nb == 2 ? run_block<1, 2>(b) : run_block<1, 1>(b);
}

}  // namespace

void forward_amx(const AmxForwardArgs& f) {
  const Geometry& G = f.G;
  const Sizes5& xs = f.xs;
  const std::int64_t C2 = pairs(G.c()), K = G.k(), kblocks = blocks16(K), ldo = kblocks * 16;
  const std::int64_t V = f.width, R = f.rows_per_block, bands = (G.oh + R - 1) / R;
  const std::int64_t blocks = G.n * G.od * bands;
  // Where a block's channels-last rows are compacted when K is not a multiple of 16.
  const std::int64_t compact_at = (R * V + 15) / 16 * 16 * ldo;
#pragma omp parallel
  {
    // Runs shorter than a tile: the tiles sized to them (configure_tiles), which run_block tells
    // by full == 0; segment_pairs >= 1 (C >= 1; backward-data skips phases with no taps).
    configure_tiles(f.segment_pairs < 16 ? static_cast<int>(f.segment_pairs) : 16);
    const int thread = omp_get_thread_num();
    float* out = f.rows + thread * f.rows_floats;
    std::uint32_t* stage = f.stage + thread * 512;
    Block blk{};
    blk.a_stride = G.sw * C2 * 4;
    blk.w_block = f.segment_count * f.segment_rows * 16;
    blk.segments = f.segments;
    blk.segment_count = f.segment_count;
    blk.full = f.segment_pairs / 16;
    blk.tail = f.segment_pairs % 16;
    blk.stage = stage;
    blk.y_stride = ldo * 4;
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t band = b % bands, od = b / bands % G.od, n = b / (bands * G.od);
      const std::int64_t oh0 = band * R, rows = smaller(R, G.oh - oh0);
      const std::int64_t tiles = ((rows - 1) * V + G.ow + 15) / 16;
      const std::uint32_t* plane = f.x + ((n * xs.d + od * G.sd) * xs.h + oh0 * G.sh) * xs.w * C2;
      const auto tile_x = [&](std::int64_t q) {
        return plane + ((q / V) * G.sh * xs.w + q % V * G.sw) * C2;
      };
      for (std::int64_t kb = 0; kb < kblocks; kb += 2) {
        const int nb = static_cast<int>(smaller(2, kblocks - kb));
        blk.w = f.w + kb * blk.w_block;
        for (std::int64_t i = 0; i < tiles; i += 2) {
          const int na = static_cast<int>(smaller(2, tiles - i));
          blk.a[0] = tile_x(16 * i);
          blk.a[1] = na == 2 ? tile_x(16 * (i + 1)) : blk.a[0];
          blk.y = out + 16 * i * ldo + kb * 16;
          run_block(na, nb, blk);
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = out + r * V * ldo;
        if (ldo != K) {
          float* packed = out + compact_at;
          for (std::int64_t p = 0; p < G.ow; ++p)
            for (std::int64_t k = 0; k < K; ++k) packed[p * K + k] = row[p * ldo + k];
          row = packed;
        }
        f.out.store(f.out.context, n, od, oh0 + r, row);
      }
    }
    _tile_release();
  }
}

namespace {

// Backward-weights: tiles 0-3 accumulate 32 rows of dW^T (two A tiles of r0 and r1 rows) by 32
// output channels (two B tiles), 4 and 5 are A, 6 and 7 are B. A group's last rows fill a tile
// partly: the tile is configured with fewer rows, so nothing past its rows is read or stored.
void configure_bwdw_tiles(int r0, int r1) {
  TileConfig c;
  const int r[8] = {r0, r0, r1, r1, r0, r1, 16, 16};
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = static_cast<std::uint8_t>(r[t]);
    c.bytes_per_row[t] = 64;
  }
  _tile_loadconfig(&c);
}

struct BwdwBlock {
  const std::uint16_t* a;  // the first A tile's first row at the block's first pixel
  std::int64_t a_stride;   // bytes between rows (the second A tile: 16 rows on)
  const std::uint32_t* b;  // the first B tile at the block's first pixel pair
  std::int64_t b_stride;   // bytes between pixel pairs
  std::int64_t steps;      // 32-pixel steps
  float* out;              // dW^T at the block's first row and channel
  std::int64_t out_stride;
  bool accumulate;        // add to what `out` holds (a later block of the same range) or start at 0
  std::int64_t prefetch;  // steps ahead whose A rows are prefetched into L1 (0: none)
};

template <int NA, int NB>
void run_bwdw_block(const BwdwBlock& k) {
  auto* out = reinterpret_cast<char*>(k.out);
  char* out1 = out + 16 * k.out_stride;
  if (k.accumulate) {
    _tile_loadd(0, out, k.out_stride);
    if constexpr (NB == 2) _tile_loadd(1, out + 64, k.out_stride);
    if constexpr (NA == 2) {
      _tile_loadd(2, out1, k.out_stride);
      if constexpr (NB == 2) _tile_loadd(3, out1 + 64, k.out_stride);
    }
  } else {
    _tile_zero(0);
    if constexpr (NB == 2) _tile_zero(1);
    if constexpr (NA == 2) {
      _tile_zero(2);
      if constexpr (NB == 2) _tile_zero(3);
    }
  }
  const auto* a = reinterpret_cast<const char*>(k.a);
  const char* a1 = a + 16 * k.a_stride;
  const auto* b = reinterpret_cast<const char*>(k.b);
  for (std::int64_t s = 0; s < k.steps; ++s, a += 64, a1 += 64, b += 16 * k.b_stride) {
    if (k.prefetch && s + k.prefetch < k.steps) {
      // A's 32 rows lie x_row apart, each a new line or two a step: more streams than the
      // hardware prefetchers follow. B's rows are consecutive.
      const char* pa = a + 64 * k.prefetch;
      for (int r = 0; r < 16; ++r) {
        _mm_prefetch(pa + r * k.a_stride, _MM_HINT_T0);
        if constexpr (NA == 2) _mm_prefetch(pa + (16 + r) * k.a_stride, _MM_HINT_T0);
      }
    }
    _tile_loadd(4, a, k.a_stride);
    if constexpr (NA == 2) _tile_loadd(5, a1, k.a_stride);
    _tile_loadd(6, b, k.b_stride);
    if constexpr (NB == 2) _tile_loadd(7, b + 64, k.b_stride);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (NB == 2) _tile_dpbf16ps(1, 4, 7);
    if constexpr (NA == 2) {
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (NB == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, out, k.out_stride);
  if constexpr (NB == 2) _tile_stored(1, out + 64, k.out_stride);
  if constexpr (NA == 2) {
    _tile_stored(2, out1, k.out_stride);
    if constexpr (NB == 2) _tile_stored(3, out1 + 64, k.out_stride);
  }
}

void run_bwdw_block(int na, int nb, const BwdwBlock& k) {
  if (na == 2)
    nb == 2 ? run_bwdw_block<2, 2>(k) : run_bwdw_block<2, 1>(k);
  else
    nb == 2 ? run_bwdw_block<1, 2>(k) : run_bwdw_block<1, 1>(k);
}

}  // namespace

void backward_weights_amx(const AmxBackwardWeightsArgs& a) {
  const std::int64_t mblocks = (a.rows + 31) / 32, kblocks = (a.kp + 31) / 32;
  const std::int64_t items = a.splits * kblocks * a.groups * mblocks;
  const std::int64_t per_split = (a.chunks + a.splits - 1) / a.splits;
  const std::int64_t blocks = (per_split + a.block_chunks - 1) / a.block_chunks;
  const std::int64_t split_floats = a.groups * a.rows * a.kp;
#pragma omp parallel
  {
    int r0_now = 0, r1_now = 0;  // the tile rows configured on this thread (none yet)
    // A static schedule gives each thread the same items in every block: each item's
    // accumulators are its own, so no barrier between blocks.
    for (std::int64_t block = 0; block < blocks; ++block) {
#pragma omp for schedule(static) nowait
      for (std::int64_t item = 0; item < items; ++item) {
        // Taps fastest: consecutive items read the same dy tiles and x at nearby offsets
        // (call 3: equal or up to 10% faster than rows fastest at 128 steps a block).
        const std::int64_t g = item % a.groups, mb = item / a.groups % mblocks;
        const std::int64_t kb = item / (mblocks * a.groups) % kblocks;
        const std::int64_t split = item / (mblocks * a.groups * kblocks);
        const std::int64_t first = split * per_split + block * a.block_chunks;
        const std::int64_t end =
            smaller(smaller(first + a.block_chunks, (split + 1) * per_split), a.chunks);
        if (first >= end) continue;
        const std::int64_t m0 = mb * 32;
        const int r0 = static_cast<int>(smaller(16, a.rows - m0));
        const int r1 = static_cast<int>(smaller(16, a.rows - m0 - 16));
        const int na = r1 > 0 ? 2 : 1;
        if (r0 != r0_now || (na == 2 && r1 != r1_now)) {
          configure_bwdw_tiles(r0, na == 2 ? r1 : r0);
          r0_now = r0;
          r1_now = na == 2 ? r1 : r0;
        }
        BwdwBlock k{};
        k.a = a.x + a.group_x[g] + m0 * a.x_row + first * 32;
        k.a_stride = 2 * a.x_row;
        k.b = a.dy + (kb * a.chunks + first) * 16 * 32;
        k.b_stride = 128;
        k.steps = end - first;
        k.out = a.dwt + split * split_floats + (g * a.rows + m0) * a.kp + kb * 32;
        k.out_stride = 4 * a.kp;
        k.accumulate = block > 0;
        k.prefetch = a.prefetch;
        run_bwdw_block(na, static_cast<int>(smaller(2, (a.kp - kb * 32) / 16)), k);
      }
    }
    _tile_release();
  }
}

namespace {

// The planar kernels' 32 output channels x 32 pixels in accumulators 0-3 (tile 2i + j: channel
// block i, pixel half j), filter tiles 4-5, x tiles 6-7.
void zero_planar_block() {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

// `steps` 32-channel steps: the filter's two 16-row tiles at w (rows 64 bytes apart), then w_step
// elements on; x's two 16-pixel tiles at b and b + b_half (rows b_stride bytes apart), then b_step
// words on.
void add_planar_products(const std::uint16_t* w, std::int64_t w_step, const std::uint32_t* b,
                         std::int64_t b_step, std::int64_t b_half, std::int64_t b_stride,
                         std::int64_t steps) {
  for (std::int64_t s = 0; s < steps; ++s, w += w_step, b += b_step) {
    _tile_loadd(4, w, 64);
    _tile_loadd(5, w + 16 * 32, 64);
    _tile_loadd(6, b, b_stride);
    _tile_loadd(7, b + b_half, b_stride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
}

// The block as [32 channels][32 pixels] floats.
void store_planar_block(float* block) {
  _tile_stored(0, block, 128);
  _tile_stored(1, block + 16, 128);
  _tile_stored(2, block + 16 * 32, 128);
  _tile_stored(3, block + 16 * 32 + 16, 128);
}

}  // namespace

void forward_amx_planar(const AmxPlanarForwardArgs& a) {
  const std::int64_t kblocks = a.kp32 / 32;
#pragma omp parallel
  {
    configure_tiles();
    alignas(64) float block[32 * 32];
    const std::int64_t b_stride = 4 * a.x_row;
#pragma omp for schedule(static)
    for (std::int64_t group = 0; group < a.chunk_groups; ++group) {
      // Each channel block over the group's chunks (sizes differing by at most one), so that
      // the block's filter rows stay in cache: chunk by chunk, every chunk read the whole filter
      // (res5's 3x3: 4.7 MB a chunk).
      const std::int64_t first = group * a.chunks / a.chunk_groups;
      const std::int64_t end = (group + 1) * a.chunks / a.chunk_groups;
      for (std::int64_t kb = 0; kb < kblocks; ++kb)
        for (std::int64_t chunk = first; chunk < end; ++chunk) {
          zero_planar_block();
          for (std::int64_t g = 0; g < a.groups; ++g)
            add_planar_products(a.w + (g * a.pair_blocks * a.kp32 + kb * 32) * 32, a.kp32 * 32,
                                a.x + a.group_x[g] + chunk * 32, 16 * a.x_row, 16, b_stride,
                                a.pair_blocks);
          store_planar_block(block);
          a.store(a.context, chunk, kb * 32, smaller(32, a.k - kb * 32), block);
        }
    }
    _tile_release();
  }
}

void forward_amx_pointwise(const AmxPointwiseForwardArgs& a) {
  const std::int64_t chunks = (a.pixels + 31) / 32, kblocks = a.kp32 / 32;
  const std::int64_t items = a.groups * a.k_parts;
#pragma omp parallel num_threads(a.threads)
  {
    configure_tiles();
    alignas(64) float block[32 * 32];
    std::uint32_t* buffer = a.buffer + omp_get_thread_num() * a.buffer_chunks * a.chunk_words;
#pragma omp for schedule(static)
    for (std::int64_t item = 0; item < items; ++item) {
      // Groups of chunks as equal as whole chunks allow (sizes differ by at most one).
      const std::int64_t group = item / a.k_parts;
      const std::int64_t first = group * chunks / a.groups;
      const std::int64_t count = (group + 1) * chunks / a.groups - first;
      const std::int64_t kb0 = item % a.k_parts * a.kb_per;
      const std::int64_t kb1 = smaller(kb0 + a.kb_per, kblocks);
      if (count <= 0 || kb0 >= kb1) continue;
      pair_pointwise_chunks_avx512(a, first, count, buffer);
      for (std::int64_t kb = kb0; kb < kb1; ++kb) {
        for (std::int64_t j = 0; j < count; ++j) {
          zero_planar_block();
          add_planar_products(a.w + kb * 32 * 32, a.kp32 * 32, buffer + j * a.chunk_words, 512, 256,
                              64, a.pair_blocks);
          store_planar_block(block);
          a.store(a.context, first + j, kb * 32, smaller(32, a.k - kb * 32), block);
        }
      }
    }
    _tile_release();
  }
}

}  // namespace convguard::cpu::bf16
