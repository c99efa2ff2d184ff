// gpu:wgmma_implicit_gemm's plan choices (host code, included by wgmma_implicit_gemm.cu alone):
// the tile shape, the split of the reduction and how many blocks share an SM, from the problem's
// GEMM sizes and the device's SM count. Kept apart from the kernels so that the rules and what
// they were measured on read in one place.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu/solvers/tc_common.cuh"
#include "gpu/solvers/wgmma_forward_common.cuh"

namespace convguard::gpu::wgf {

inline int sms() {
  return tc::sm_count();
}

struct Tile {
  int bm, bn;
};

// Waves of `tiles` blocks of one block an SM: tiles over the SM count, rounded up.
inline std::int64_t waves(std::int64_t tiles) {
  return (tiles + sms() - 1) / std::max(1, sms());
}

// Stages of reduction from which few tiles split it in 2 (tile_for, split_count).
constexpr int long_reduction(bool in_place) {
  return in_place ? 32 : 48;
}

// A block's reduction rate is bound by what its SM can fetch (a 128 x 128 block's stage took about
// as long as a 128 x 64 one's when each had an SM to itself, v6/variants.txt), so the largest tile
// that still keeps the SMs busy wins, and a split reduction (fp32 partials through device memory
// and a second kernel: about 10 us on ResNet-50's res4/res5) pays only on long reductions of very
// few tiles. Measured on ResNet-50 b32 (v4/, v6/ variants.txt):
//  - K <= 64: 128 x 64 (two blocks per SM);
//  - 128 x 256 for K >= 256 and 256 x 128 otherwise where they still give every SM two blocks
//    (res2a_branch2c, res3[a-d]_branch2c, res3a_branch1: 11-16% faster than 128 x 128);
//  - else 128 x 128, unsplit down to half an SM's worth of tiles (res4's 98 tiles: 12-16% faster
//    than 196 of 128 x 64); below that, with fewer than 48 stages of reduction, 128 x 64 unsplit
//    (res5[b-c]_branch2a: 0.0197 ms against 0.0229 split in 2), else 128 x 128 split in 2
//    (res5's 3x3 layers, 72 stages: 0.0338 ms against 0.0435 unsplit and 0.0369 as 128 x 64).
// Backward-data reading its filter in place (in_place; measured on ResNet-50 b32 with each shape
// forced, docs/gpu/2026-11-25-bwdnoflip/secondary): 128 x 256 also for N >= 1024 down to 3/4 of
// an SM's worth of its tiles (res5[b-c]_branch2a, 104 tiles: 0.0130 ms against 0.0161 as 128 x
// 128; res4[b-f]_branch2a and res5a_branch2a, 196: 3-4% faster), and few tiles with at least 32
// stages of reduction take 128 x 128 split in 2 rather than 128 x 64 (res5[a-c]_branch2c: 0.0181
// against 0.0200).
// Counting waves (docs/gpu/2026-11-25-waves, call1/: every shape forced on ResNet-50 b32): where
// one block per SM runs 128 x 128 tiles in at least twice the waves of 128 x 256 (waves: tiles
// over the SM count, rounded up), 128 x 256 for K >= 512 outside the in-place path too, its
// larger tile reusing each loaded row twice as often in no more time: forward res5a_branch1
// 0.0244 -> 0.0202 ms, res5[a-c]_branch2c 0.0163 -> 0.0141 (104 tiles in one wave against 208 in
// two), res5a_branch2a (K = 512, 98 against 196) 0.0252 -> 0.0210; res4[a-f]_branch2c and
// res4a_branch1 (196 against 392: 2 waves against 3) stay 128 x 128 (0.0180 and 0.0245 as 128 x
// 256, a tie and a loss).
// CONVGUARD_WGMMA_TILE=BMxBN (128x64, 128x128, 128x256, 256x64, 256x128) forces a shape and
// CONVGUARD_WGMMA_SPLIT=N a split, for measuring (ragged problems keep 128 x at most 128).
// wide_tma: the bulk-copy loaders take 128 x 256 tiles for this plan (16-bit, WgPlan::tma_fits, no
// loader forced): then long reductions (at least 32 stages) of K >= 512 take 128 x 256 wherever
// that still makes two waves, its reuse of each loaded A row outweighing an emptier last wave
// (measured on the H200 with 128 x 256 forced, docs/gpu/2026-11-28-tiles256/forced: forward b256
// res5a_branch2b 0.1116 -> 0.0992 ms, res5[b-c]_branch2b 0.1116 -> 0.0994, res5[b-c]_branch2a
// 0.0554 -> 0.0510, backward-data b256 res5[b-c]_branch2b 0.1168 -> 0.0994: 196 tiles against
// 392 of 128 x 128; at b32 these layers make one wave of 26 and stay).
// Few 128 x 256 tiles over a long reduction (at least long_reduction stages: then tile_for's
// alternative is 128 x 128, split in 2 where split_count splits it), split so that their blocks
// fill one wave (at most an SM's worth; ceil(stages / split) >= kFillStages stages a split, the
// last split possibly shorter), where the busiest SM's share (tile area times stages a split,
// plan_cost's waves) is at least 10% below that 128 x 128 plan's. Returns the split count, 0 where
// the rule does not apply. Measured on the H200, ResNet-50 b32 bf16, each tile and split forced
// against the plans, interleaved, the mean of two rounds (docs/gpu/2026-11-30-session19/call2 and
// call3): the 3x3 layers over 7 x 7 with 512 channels (72 stages; 26 wide tiles, 5 splits of 15
// stages: 130 blocks, where 128 x 128 split in 2 made 104 blocks of 36), forward res5a_branch2b
// 0.0290 -> 0.0246 ms and res5[b-c]_branch2b 0.0284 -> 0.0243, backward-data res5[b-c]_branch2b
// 0.0288 -> 0.0240. The 32-stage layers lost as 128 x 256 at every split (forward
// res5[b-c]_branch2a 0.0139 -> 0.0193 against its pixel-wide plan, backward-data res5[a-c]_branch2c
// 0.0185 -> 0.0192); below long_reduction the rule does not apply (there tile_for's 128 x 64 and
// the pixel-wide tiles decide, and no split was measured). At b8 and b16 the same layers take 6
// splits of 12 stages: forward res5a_branch2b 0.0276 -> 0.0195 ms (b8) and 0.0279 -> 0.0206 (b16)
// against 128 x 128 split in 2; 5 splits ran 0.0209 and 0.0220 (call13).
inline constexpr int kFillStages = 12;
inline int wide_fill_split(std::int64_t m, std::int64_t k, std::int64_t kd, bool in_place) {
  const std::int64_t stages = (kd + kBK - 1) / kBK, mt = (m + 127) / 128;
  if (k < 256 || stages < long_reduction(in_place)) return 0;
  const std::int64_t wide = mt * ((k + 255) / 256), narrow = mt * ((k + 127) / 128);
  const std::int64_t split = std::min<std::int64_t>(sms() / wide, stages / kFillStages);
  if (split < 2) return 0;
  const std::int64_t narrow_split = 2 * narrow < sms() ? 2 : 1;
  const std::int64_t before =
      waves(narrow * narrow_split) * 128 * 128 * ((stages + narrow_split - 1) / narrow_split);
  const std::int64_t after = 128 * 256 * ((stages + split - 1) / split);
  return 10 * after < 9 * before ? static_cast<int>(split) : 0;
}

// CONVGUARD_WGMMA_TILE's shape, {0, 0} when unset or not one of the five (then said once). Read at
// each plan, as CONVGUARD_WGMMA_SPLIT, _WS and _ORDER are, so that a test can set them (a run
// checks its workspace against its own plan, so a setting changed between the workspace's query
// and the run fails that run with a status, never past its buffers).
inline Tile forced_tile() {
  const char* text = std::getenv("CONVGUARD_WGMMA_TILE");
  int bm = 0, bn = 0;
  char extra = 0;
  if (!text) return Tile{0, 0};
  if (std::sscanf(text, "%dx%d%c", &bm, &bn, &extra) == 2 &&
      ((bm == 128 && bn == 256) || ((bm == 128 || bm == 256) && (bn == 64 || bn == 128))))
    return Tile{bm, bn};
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr,
                 "convguard: CONVGUARD_WGMMA_TILE='%s' ignored (one of 128x64, 128x128, 128x256, "
                 "256x64, 256x128)\n",
                 text);
  return Tile{0, 0};
}

inline Tile tile_for(std::int64_t m, std::int64_t k, std::int64_t kd, bool ragged, bool in_place,
                     bool wide_tma = false) {
  const Tile forced = forced_tile();
  if (forced.bm) return {ragged ? 128 : forced.bm, ragged ? std::min(forced.bn, 128) : forced.bn};
  if (k <= 64) return {128, 64};
  const std::int64_t mt = (m + 127) / 128;
  if (wide_tma && !ragged && wide_fill_split(m, k, kd, in_place) > 0) return {128, 256};
  if (wide_tma && !ragged && k >= 512 && (kd + kBK - 1) / kBK >= 32 &&
      waves(mt * ((k + 255) / 256)) >= 2)
    return {128, 256};
  if (!ragged && k >= 256 && mt * ((k + 255) / 256) >= 2 * sms()) return {128, 256};
  if (in_place && k >= 1024 && 4 * mt * ((k + 255) / 256) >= 3 * sms()) return {128, 256};
  if (!ragged && !in_place && k >= 512 &&
      2 * waves(mt * ((k + 255) / 256)) <= waves(mt * ((k + 127) / 128)))
    return {128, 256};
  if (!ragged && ((m + 255) / 256) * ((k + 127) / 128) >= 2 * sms()) return {256, 128};
  if (2 * mt * ((k + 127) / 128) < sms() && (kd + kBK - 1) / kBK < long_reduction(in_place))
    return {128, 64};
  return {128, 128};
}

// 128 x 256 tiles where tile_for could take them for wide_fill_split (fill: its wide_tma, no tile
// forced): that rule's count where it applies (it then is why tile_for took them; tile_for's other
// 128 x 256 rules need at least a wave of such tiles, where it never applies). Else 2 when the tile
// leaves more than half the SMs without a block and the reduction is long (at least long_reduction
// stages: 48, so each split keeps 24; 32 for backward-data in place); else 1 (tile_for says why).
inline int split_forced() {  // CONVGUARD_WGMMA_SPLIT, for measuring; 0 when unset
  static std::atomic<bool> said{false};
  return tc::env_int("CONVGUARD_WGMMA_SPLIT", 1, 16, &said);
}
inline int split_count(std::int64_t m, std::int64_t k, std::int64_t kd, Tile t, bool in_place,
                       bool fill) {
  const int forced = split_forced();
  const std::int64_t tiles = (kd + kBK - 1) / kBK;
  if (forced) return static_cast<int>(std::min<std::int64_t>(forced, tiles));
  if (fill && t.bm == 128 && t.bn == 256)
    if (const int split = wide_fill_split(m, k, kd, in_place); split > 0) return split;
  const std::int64_t blocks = ((m + t.bm - 1) / t.bm) * ((k + t.bn - 1) / t.bn);
  return 2 * blocks < sms() && tiles >= long_reduction(in_place) ? 2 : 1;
}

// Blocks an SM for the plan's grid (blocks: its x * y * z; stages: the longest reduction, in
// stages of kBK): 2 takes the 128 x 128 kernel of kStagesTwoPerSm stages (two-warpgroup kernel,
// non-ragged), else 1. Two blocks an SM give the scheduler twice the warps, so one block's
// pipeline fill and epilogue overlap the other's multiplies, but each block prefetches one stage
// ahead instead of five: that paid only where blocks are many and short (measured with it forced,
// call1/): backward-data's stride-2 layers of res3, 784-1568 blocks of at most 8 stages
// (res3a_branch2b 0.0441 -> 0.0397 ms, res3a_branch1 0.0625 -> 0.0551), while 196 blocks of 8
// stages (forward res3[b-d]_branch2a 0.0193 -> 0.0207), 392-784 of 16 (backward-data
// res4a_branch2b, res4a_branch1: 3-12% slower) or fewer blocks than SMs (res4's 98 tiles: up to
// 1.7x slower) lost. So: at least four blocks per SM's worth and at most 8 stages.
// CONVGUARD_WGMMA_PER_SM=1 or 2 forces it where it applies, for measuring.
inline int blocks_per_sm(std::int64_t blocks, std::int64_t stages, Tile t, bool ragged, int ws) {
  static std::atomic<bool> said{false};  // (read at each plan)
  const int forced = tc::env_int("CONVGUARD_WGMMA_PER_SM", 1, 2, &said);
  if (ragged || ws != 0 || t.bm != 128 || t.bn != 128) return 1;
  if (forced) return forced;
  return blocks >= 4 * sms() && stages <= 8 ? 2 : 1;
}

// The order of a plan's output tiles (WgArgs::n_fast): N tiles fastest where there are several,
// so that the blocks running at once read each A tile (x's pixels, read once per N tile) while it
// is still in L2. In M-fastest order an A tile's N tiles start m_tiles blocks apart, which at batch
// 256 is several waves; B, the filter, is small beside x on every layer of the suites and stays in
// L2 in either order. Measured on the H200 (docs/gpu/2026-11-28-order, old order forced against
// the new, interleaved): alone, at most +5% on the 1x1 layers of several N tiles and noise
// elsewhere (ResNet-50 b32 forward 1.003x, b256 forward 1.007x, backward-data b256 1.008x); its
// worth is that the persistent 128 x 128 kernel no longer reads A once per N tile (tma_ws_for).
// CONVGUARD_WGMMA_ORDER=1 (M fastest) or 2 (N fastest) forces one, for measuring.
inline bool n_fast_order() {
  static std::atomic<bool> said{false};
  return tc::env_int("CONVGUARD_WGMMA_ORDER", 1, 2, &said) != 1;
}
inline int tile_order(std::int64_t n_tiles) {
  return n_tiles > 1 && n_fast_order() ? 1 : 0;
}

// The bulk-copy (TMA) loaders of the warp-specialised kernel (wgmma_ws_forward.cuh, kTma) for a
// problem they fit (WgPlan::tma_fits: forward, or stride-1 backward-data reading its filter in
// place): 4, a tile per block, or 5, persistent; 0 to keep the plan's kernel; *t may become
// 128 x 128. Measured on ResNet-50 b32 bf16 with each kernel forced, forward and backward-data
// (docs/gpu/2026-11-27-tma/tma and bwd, against the two-warpgroup kernel's plans):
//  - 128 x 64 tiles (a tile per block, two an SM) pay on long reductions: res2a_branch2b (9
//    stages) forward 0.0359 -> 0.0299 ms and backward-data 0.0352 -> 0.0301, res5[b-c]_branch2a
//    forward (32) 0.0199 -> 0.0179; on the 1x1 layers of 4 stages that form lost 3% (forward
//    res2[b-c]_branch2a, backward-data res2a_branch2c), but the persistent one wins on every
//    short reduction of such tiles (H200, docs/gpu/2026-11-28-pixel-wide/explore, each form
//    forced against the plans, with 1x1 x read by tiled copies): res2a_branch2a (1 stage)
//    forward b32 0.0148 -> 0.0120 ms, b256 0.0855 -> 0.0629, backward-data b32 0.0149 -> 0.0122;
//    res2[b-c]_branch2a forward (4 stages) b32 1.067x, b256 1.119x; backward-data res2a_branch2c
//    1.084x;
//  - 128 x 128 tiles of at most 8 stages (1x1 layers), persistent, so that a tile's epilogue
//    overlaps the next one's loads: forward res4[a-f]_branch2c 0.0181 -> 0.0150, backward-data
//    res4[b-f]_branch2a 0.0173 -> 0.0147; also in place of 256 x 128 tiles of such short
//    reductions (backward-data res3[b-d]_branch2a 0.0221 -> 0.0187);
//  - longer reductions (3x3 layers, split or not) a tile per block of 7 stages: forward
//    res4[b-f]_branch2b 0.0256 -> 0.0225, res3[b-d]_branch2b 0.0295 -> 0.0256; backward-data
//    res3[b-d]_branch2b 0.0283 -> 0.0257;
//  - 128 x 256 tiles (16-bit; its consumers' 128 accumulators fit beside a producer of one issuing
//    thread) keep their size on the loaders: persistent for at most 8 stages over more than one
//    wave, else a tile per block; persistent 128 x 128 where the wide tiles' last wave is the
//    emptier (backward-data b32 res4[b-f]_branch2a: 196 wide tiles in 1.5 waves, 0.0159 ms against
//    0.0144 as 392 narrow ones in 2.97). Measured on the H200 with each form forced against the
//    plans before it, which ran such tiles on the two-warpgroup kernel or, short and over several
//    waves, as persistent 128 x 128 (docs/gpu/2026-11-28-tiles256): forward b32 res5a_branch2a (16
//    stages) 0.0212 -> 0.0181 ms, res5a_branch1 0.0201 -> 0.0170, res5[a-c]_branch2c (8 stages,
//    one wave: a tile per block, 0.0124 against 0.0132 persistent), res2a_branch2c (persistent)
//    0.0259 -> 0.0242; b256 res4a_branch2b 0.1088 -> 0.0854, res5a_branch1 0.1034 -> 0.0844,
//    res4a_branch1 (persistent) 0.1221 -> 0.0991, res2a_branch2c 0.1641 -> 0.1409; backward-data
//    b256 res5a_branch2a 0.1245 -> 0.0983, res5[b-c]_branch2b 0.1168 -> 0.0994.
// Where a tile's N tiles would run waves apart (M fastest, CONVGUARD_WGMMA_ORDER=1), 256 x 128
// tiles of more than 6 waves keep their kernel: their reuse of each loaded row had outweighed the
// persistent kernel's overlap at batch 256 (forward res4a_branch2a 0.1365 -> 0.1753 ms;
// docs/gpu/2026-11-27-tma/b256); in N-fastest order (tile_order) the N tiles of an A tile run at
// once and read it from L2 (with 128 x 128 persistent in place of 128 x 256 at b256: forward
// res3a_branch2a 0.2072 -> 0.1505 ms, res4[a-f]_branch2c 0.0884 -> 0.0733,
// docs/gpu/2026-11-28-order).
// TF32 (f32 stages; tf32): no persistent form (its staging region is 16-bit's), so 1x1 layers take
// the plain one, 128 x 64 and 128 x 256 tiles keep their kernel; measured with the plain form
// forced (docs/gpu/2026-11-27-tma/tf32): the 3x3 layers 1.10-1.14x, the 1x1 layers of 128 x 128 and
// 256 x 128 tiles 1.02-1.10x, while 128 x 128 in place of 128 x 256 tiles lost (0.84-0.92x) and
// 128 x 64 tiles lost on res5[b-c]_branch2a (0.0276 -> 0.0305 ms).
// keep_tile (CONVGUARD_WGMMA_TILE forced): only the forced tile's own loaders, no replacement.
// cp_async_ws: 16-bit forward, whose 256 x 128 tiles ws_mode would otherwise run as the cp.async
// persistent kernel's 128 x 128 (so long reductions of them compare 128 x 128 with 128 x 128:
// forward res3[b-d]_branch2b at batch 256 0.1581 -> 0.1310 ms, res3a_branch2b 0.1591 -> 0.1400);
// elsewhere 256 x 128 tiles of long reductions keep the two-warpgroup kernel (backward-data's
// res3[b-d]_branch2b at batch 256, not measured with the loaders).
inline int tma_ws_for(std::int64_t m, std::int64_t k, std::int64_t stages, bool tf32,
                      bool cp_async_ws, bool keep_tile, Tile* t) {
  const std::int64_t mt = (m + 127) / 128;
  if (t->bm == 128 && t->bn == 64) return tf32 ? 0 : stages > 8 ? 4 : 5;
  if (t->bm == 128 && t->bn == 128) return stages <= 8 && !tf32 ? 5 : 4;
  if (t->bm == 128 && t->bn == 256) {
    if (tf32) return 0;
    const std::int64_t wide = mt * ((k + 255) / 256), narrow = mt * ((k + 127) / 128);
    if (stages > 8 || waves(wide) == 1) return 4;
    // Persistent: 128 x 128 where the wide tiles' last wave would leave the SMs idler (tiles a
    // wave below 0.9 of the narrow ones'); a forced tile stays.
    if (!keep_tile && 10 * wide * waves(narrow) < 9 * narrow * waves(wide)) *t = Tile{128, 128};
    return 5;
  }
  if (keep_tile) return 0;
  // 256 x 128
  const std::int64_t tiles = ((m + 255) / 256) * ((k + 127) / 128);
  if (stages > 8 ? !cp_async_ws : !n_fast_order() && waves(tiles) > 6) return 0;
  *t = Tile{128, 128};
  return stages <= 8 && !tf32 ? 5 : 4;
}

// Pixel-wide tiles (wgmma_pixel_wide.cuh: 128 output channels x bp pixels) in place of the plan's,
// for a 16-bit problem they fit (WgPlan::pixel_wide_fits); 0 keeps the plan. A plan's time is
// counted as its busiest SM's share: the waves of its blocks times a block's multiply-adds (tile
// area times stages of reduction), 1.7 times that for 128 x 64 tiles in one wave (measured: alone
// on an SM, the 4-stage kernel of that tile ran res5[b-c]_branch2a's stages at 0.59 of the rate
// per multiply-add of 96-pixel tiles). Pixel-wide tiles take the width of 96, 128, 192 or 256 whose
// count (over the channel tiles) gives the least, the wider on a tie (each loaded filter row reused
// more), where that is at least 10% less than the plan's and the reduction is at least 8 stages
// long (their epilogue, transposed through shared memory, does not overlap the next tile's loads,
// so short reductions keep the persistent kernels). At batch 32 on 132 SMs: res4[b-f]_branch2a
// (6272 pixels, 256 channels, 16 stages) 98 tiles of 128 x 128 in one wave -> 132 of 96 pixels;
// res3[b-d]_branch2a/2b (25088 pixels, 128 channels) 196 tiles in two waves -> 131 of 192 pixels.
// Measured with each width forced, docs/gpu/2026-11-28-pixel-wide: 64 was not measured and is not
// taken (session 19 measured it on res5's 3x3 layers at b32: 0.0375 ms against the plan's 0.0289).
// Also on a tie in that count where the plan runs a tile per block on the bulk-copy loaders (ws 4:
// no tile's loads overlap another's epilogue) with tiles smaller than the pixel-wide ones, or on
// the two-warpgroup kernel (ws 0: cp.async loads, a tile per block) with tiles no larger
// (tie_from_area: the least pixel-wide tile area that wins the tie, the plan's tile area + 1 for
// ws 4 and its area for ws 0; 0 elsewhere): forward b256 res3[b-d]_branch2b (1568 tiles
// of 128 x 128 in 12 waves against 784 of 256 pixels in 6, 18 stages) 0.1334 -> 0.1026 ms,
// res3a_branch2b 0.1339 -> 0.1094 (H200, each width forced, the mean of two interleaved rounds,
// docs/gpu/2026-11-30-session19/call1; where the plan's tiles were 128 x 256 the same tie lost
// 1-4%: res4a_branch2b 0.0846 -> 0.0860, res5a_branch2a 0.0840 -> 0.0873). On ws 0, backward-data
// b256 res3[b-d]_branch2b (392 x 2 tiles of 256 x 128, 18 stages, against 784 of 256 pixels)
// 0.1434 -> 0.1033 ms (call11 of the same folder).
// CONVGUARD_WGMMA_PIXELS=64|96|128|192|256 forces a width wherever the tiles fit, =1 never takes
// them (read at each plan, so that a test can set it).
inline int pixel_wide_forced() {
  const char* text = std::getenv("CONVGUARD_WGMMA_PIXELS");
  if (!text) return 0;
  for (const int v : {1, 64, 96, 128, 192, 256})
    if (std::to_string(v) == text) return v;
  static std::atomic<bool> said{false};  // once, not at every plan
  if (!said.exchange(true))
    std::fprintf(stderr,
                 "convguard: CONVGUARD_WGMMA_PIXELS='%s' ignored (1, 64, 96, 128, 192, 256)\n",
                 text);
  return 0;
}
inline std::int64_t plan_cost(std::int64_t blocks, Tile t, std::int64_t stages) {
  const std::int64_t cost = waves(blocks) * t.bm * t.bn * stages;
  return t.bm == 128 && t.bn == 64 && blocks <= sms() ? cost * 17 / 10 : cost;
}
inline int pixel_wide_for(std::int64_t m, std::int64_t k, std::int64_t stages,
                          std::int64_t cost_now, std::int64_t tie_from_area) {
  const int forced = pixel_wide_forced();
  if (forced) return forced == 1 ? 0 : forced;
  if (stages < 8) return 0;
  int best = 0;
  std::int64_t best_cost = 0;
  for (const int bp : {256, 192, 128, 96}) {
    const std::int64_t tiles = ((k + 127) / 128) * ((m + bp - 1) / bp);
    const std::int64_t cost = plan_cost(tiles, Tile{128, bp}, stages);
    if (best == 0 || cost < best_cost) best = bp, best_cost = cost;
  }
  const bool tie_won =
      tie_from_area > 0 && best_cost <= cost_now && std::int64_t{128} * best >= tie_from_area;
  return 10 * best_cost < 9 * cost_now || tie_won ? best : 0;
}

}  // namespace convguard::gpu::wgf
