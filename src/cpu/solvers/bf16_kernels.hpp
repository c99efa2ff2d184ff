// The boundary of cpu:bf16_direct's AVX-512 files (bf16_direct_avx512.cpp, bf16_bwdw_avx512.cpp,
// compiled with -mavx512f -mavx512bf16). Plain structs and pointers only: a library template
// used in such a file (std::vector, std::function, std::min) is emitted there as a weak copy
// compiled for AVX-512, and the linker may keep that copy for the whole program, which would
// then fault on a CPU without AVX-512. Buffers and tables are made on the other side
// (bf16_entry.cpp).
#pragma once

#include <cstdint>

#include "core/geometry.hpp"
#include "cpu/staging.hpp"

namespace convguard::cpu::bf16 {

// The pair and lane sizes every bf16 file uses, in an unnamed namespace so that an AVX-512 file
// gets no weak copy of them (see above).
namespace {
// 32-bit words that hold n bf16 values in pairs (an odd n's last pair is zero-padded).
constexpr std::int64_t pairs(std::int64_t n) {
  return (n + 1) / 2;
}
// Whole 16-lane vectors that hold n channels.
constexpr std::int64_t blocks16(std::int64_t n) {
  return (n + 15) / 16;
}
// n rounded up to whole 16-lane vectors.
constexpr std::int64_t padded16(std::int64_t n) {
  return blocks16(n) * 16;
}
}  // namespace

// Where the forward kernel puts each finished output row (n, od, oh): channels-last fp32
// [OW][K], handed over by the thread that computed it while the row is in its cache.
struct RowStore {
  void (*store)(const void* context, std::int64_t n, std::int64_t d, std::int64_t h,
                const float* row);
  const void* context;
};

struct ForwardArgs {
  detail::Geometry G;
  Sizes5 xs;                       // x's padded sizes (pitches)
  const std::uint32_t* x;          // x as channel pairs, channels-last, padded
  const std::uint32_t* w;          // the packed filter (bf16_pack.hpp: pack_filter)
  const std::int64_t* tap_offset;  // pairs from a window's first tap to each tap
  std::int64_t rows_per_block;     // output rows a thread computes at once (tiles span them)
  float* rows;  // rows_per_block * OW * K floats per thread (omp_get_max_threads)
  RowStore out;
};
void forward_avx512(const ForwardArgs& a);

// cpu:bf16_direct:amx_bf16's forward kernel (bf16_amx.cpp, compiled with -mamx-tile
// -mamx-bf16 -mavx512f). Output pixels go 16 to a tile, at one x stride apart: each tile's
// pixels lie on `width`-wide virtual rows, either a row of the output rounded up to 16 (any
// stride), or, at stride 1, the padded input's rows (a tile may then run across output rows;
// the pixels past OW are computed and dropped). Its reduction is `segment_count` runs of
// `segment_pairs` consecutive x words, each against its own filter rows.
struct AmxSegment {
  std::int64_t x_offset;  // words from a pixel's first tap to the run's first word
  std::int64_t w_row;     // the run's first row in each 16-lane block of the filter
};
struct AmxForwardArgs {
  detail::Geometry G;
  Sizes5 xs;                   // x's padded sizes (pitches)
  const std::uint32_t* x;      // x as channel pairs, channels-last, padded (and 16 * sw * C2
                               // readable words past the last one a window reads)
  const std::uint32_t* w;      // pack_filter with FilterRows{per, segment_rows}
  const AmxSegment* segments;  // segment_count of them
  std::int64_t segment_count, segment_pairs, segment_rows;
  std::int64_t width;           // pixels per virtual row (see above)
  std::int64_t rows_per_block;  // output rows of one (n, od) plane a thread computes at once
  float* rows;                  // rows_floats per thread: the block's outputs (and a spare row)
  std::int64_t rows_floats;
  std::uint32_t* stage;  // 512 words per thread: a segment's last, partial tiles of x
  RowStore out;
};
void forward_amx(const AmxForwardArgs& a);

// cpu:bf16_direct:amx_bf16's backward-weights kernel (bf16_amx.cpp). dW^T [groups * rows][kp]
// += A B over virtual pixels, 32 a step: A is `rows` rows of x values along pixels (bf16, rows
// x_row elements apart, group g's row 0 at x + group_x[g]; tiles read 32 consecutive pixels of a
// row at any element offset), B is dy as pairs of adjacent pixels in blocks of 32 output
// channels, [kp / 32 rounded up][chunks * 16][32] (pixels rounded up to whole steps, zero past
// the grid) (AMX's B layout, two B tiles side by side: a
// tile's rows 128 bytes apart whatever K is; a pitch of kp words put K = 512's 16 rows in two
// L1 sets). A row of a group is one (tap, input channel) column of dW; the pixels are a
// virtual grid on which every group reads x at one constant offset (bf16_amx_bwdw.cpp).
// Work: `splits` ranges of the chunks, each range into its own dW^T (dwt + split * groups * rows
// * kp) in blocks of block_chunks; within a block, items of 32 rows by 32 output channels, each
// owning its accumulators: the order of every sum is fixed by the problem alone.
struct AmxBackwardWeightsArgs {
  const std::uint16_t* x;
  std::int64_t x_row;
  const std::int64_t* group_x;
  std::int64_t groups, rows;
  const std::uint32_t* dy;
  std::int64_t kp;      // output channels padded to 16 (dW^T's row)
  std::int64_t chunks;  // 32-pixel steps of the whole reduction
  std::int64_t splits, block_chunks;
  std::int64_t prefetch;  // steps ahead whose x rows are prefetched into L1 (0: none)
  float* dwt;
};
void backward_weights_amx(const AmxBackwardWeightsArgs& a);

// cpu:bf16_planar:amx_bf16's forward kernel (bf16_amx.cpp): y^T tiles, output channels by
// pixels. A is the filter [groups][pair_blocks][kp32][32] (16 output channels x 32 input channels
// a tile, rows 64 bytes apart), B is x as channel-pair rows along virtual pixels (a tile: 16 pair
// rows x_row words apart, 16 consecutive pixels at any word offset; group g's row 0 at x +
// group_x[g]). Each item, 32 channels by one 32-pixel step, reduces over every group and pair
// block with its accumulators in tiles, then hands the [32 channels][32 pixels] fp32 block to
// `store` (which drops the pixels that are not outputs). For C < 32 the same, with one group at
// offset 0 whose "channels" are each output pixel's window values (bf16_amx_planar.cpp:
// copy_windows) and whose pixels are the output's own.
struct AmxPlanarForwardArgs {
  const std::uint32_t* x;
  std::int64_t x_row;
  const std::int64_t* group_x;
  std::int64_t groups, pair_blocks;
  const std::uint16_t* w;
  std::int64_t kp32, k;
  std::int64_t chunks;
  std::int64_t chunk_groups;  // runs of consecutive chunks, each channel block over a run
  void (*store)(const void* context, std::int64_t chunk, std::int64_t k0, std::int64_t channels,
                const float* block);
  const void* context;
};
void forward_amx_planar(const AmxPlanarForwardArgs& a);

// cpu:bf16_planar:amx_bf16's pointwise forward (bf16_amx.cpp): a 1x1 filter with no padding and
// channels-first x, read in place. Pixel v of the flat output (n, od, oh, ow) reads x at
// xs[0] n + (od sd) xs[2] + (oh sh) xs[3] + ow sw; where x_dense (stride 1, output planes the
// size of x's, x's planes dense), an image's pixel p at x + p, so one run of pixels may span
// rows. The 32-pixel chunks are split into `groups` groups of consecutive chunks (sizes
// differing by at most one), each group into k_parts parts of kb_per 32-channel blocks: an item
// is a group's part. It pairs its chunks' channels into its thread's buffer (chunk_words words a
// chunk, at most buffer_chunks chunks), then for each of its channel blocks runs every chunk, so
// that the block's filter rows stay in cache over the group. `store` as forward_amx_planar's.
struct AmxPointwiseForwardArgs {
  const std::uint16_t* x;
  std::int64_t xs[4];  // x's n, c, d, h strides in elements (w's is 1)
  std::int64_t c, pair_blocks;
  std::int64_t od, oh, ow, sd, sh, sw;
  std::int64_t pixels;  // n od oh ow
  bool x_dense;
  const std::uint16_t* w;
  std::int64_t kp32, k;
  std::int64_t groups, k_parts, kb_per, chunk_words, buffer_chunks;
  int threads;
  std::uint32_t* buffer;  // threads x buffer_chunks x chunk_words words, 64-byte aligned
  void (*store)(const void* context, std::int64_t chunk, std::int64_t k0, std::int64_t channels,
                const float* block);
  const void* context;
};
void forward_amx_pointwise(const AmxPointwiseForwardArgs& a);
// The channel pairs of `count` (at most 16) chunks from chunk `first` for forward_amx_pointwise,
// chunk_words apart at dst (bf16_direct_avx512.cpp): per 16-pair block, pixels 0-15 then 16-31,
// each as 16 pair rows of 16 words; zero words for the pairs past C and the pixels past the last.
void pair_pointwise_chunks_avx512(const AmxPointwiseForwardArgs& a, std::int64_t first,
                                  std::int64_t count, std::uint32_t* dst);

// 16 rows (`rows` of them real, src_row elements apart) of `count` consecutive bf16 values as
// pairs of adjacent values, transposed: ceil(count / 2) rows of 16 words at dst (dst_row words
// apart). An odd count's last pair has a zero high half; the rows past `rows` are zero words.
void transpose_pairs_avx512(const std::uint16_t* src, std::int64_t src_row, std::int64_t rows,
                            std::int64_t count, std::uint32_t* dst, std::int64_t dst_row);

struct BackwardWeightsArgs {
  detail::Geometry G;
  Sizes5 xs;                  // x's padded sizes
  const std::uint32_t* x;     // x as shifted pairs (pack_shifted_pairs)
  const std::uint32_t* dy;    // dy as pixel pairs (pack_pixel_pairs), Kp channels
  const std::int64_t* col;    // per column q = tap * C + c of dW: pairs from a pixel to its x
  const std::int64_t* row_x;  // per output row (n, od, oh): pairs from x to its first pixel
  float* dwt;                 // dW^T [taps * C][Kp]
};
void backward_weights_avx512(const BackwardWeightsArgs& a);

// fp32 [W][C] (rows in_row floats apart) rounded to bf16 as float_to_bfloat rounds (to nearest
// even; NaN stays NaN), stored at dst + w * dw + c * dc: 16 values per vector where dc or dw is
// 1, else one by one.
void store_bf16_avx512(const float* in, std::int64_t in_row, std::int64_t W, std::int64_t C,
                       std::uint16_t* dst, std::int64_t dc, std::int64_t dw);
// rows x cols 32-bit words (each at most 16) at src (rows src_row apart) stored transposed at dst:
// cols rows of 16 words, dst_row apart, the words past `rows` zero.
void transpose_words_avx512(const std::uint32_t* src, std::int64_t src_row, std::int64_t rows,
                            std::int64_t cols, std::uint32_t* dst, std::int64_t dst_row);
// bf16 bits at src + c * sc + w * sw into channels-last [W][C]: 16 x 16 blocks transposed in
// registers when sw is 1 (channels-first), else one by one.
void load_bf16_rows_avx512(const std::uint16_t* src, std::int64_t sc, std::int64_t sw,
                           std::int64_t W, std::int64_t C, std::uint16_t* out);

}  // namespace convguard::cpu::bf16
