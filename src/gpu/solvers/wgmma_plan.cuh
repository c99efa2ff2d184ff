// gpu:wgmma_implicit_gemm's plan (host code): which kernel, tile, loader, split and grid a problem
// takes, forward and backward-data (its stride phases too), and the settings that force them for
// measuring. Included by wgmma_implicit_gemm.cu alone, which launches what it says.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "convguard/problem.hpp"
#include "convguard/solver.hpp"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"
#include "gpu/solvers/tma.cuh"
#include "gpu/solvers/wgmma_forward_common.cuh"
#include "gpu/solvers/wgmma_pixel_wide.cuh"
#include "gpu/solvers/wgmma_tiles.cuh"
#include "gpu/solvers/wgmma_ws_forward.cuh"

namespace convguard::gpu::wgf {

// Which kernel the plan takes: 0 the two-warpgroup one, 1 the warp-specialised one, 2 its
// persistent variant, 3 its cluster variant, 4 and 5 the forms of 1 and 2 whose loads are bulk
// tensor copies (wgmma_ws_forward.cuh; launch_stages says for which tiles each exists). Measured
// on ResNet-50 b32 bf16 forward (docs/gpu/2026-11-25-wsfwd): the warp-specialised kernels with
// cp.async loaders tie with or lose to the two-warpgroup one on every layer at its own tile
// (128 x 64: 20-55% slower, one block per SM of 8 stages or two of 4; the cluster variant 1.5-2x
// slower, 0.75x after its per-stage cluster-scope fence went, docs/gpu/2026-11-27-tma/cluster),
// except that the persistent 128 x 128 kernel beats the 256 x 128 tiles tile_for picks for 1x1
// layers of K = 128 with many tiles (res3a_branch2a 0.0385 -> 0.0328 ms), so those take it (*tile
// becomes 128 x 128). The bulk-copy forms beat it on most forward layers they fit (WgPlan's
// tma_fits, tma_ws_for in wgmma_tiles.cuh). Non-ragged problems only (the ragged variant stores
// its element-wise loads itself). CONVGUARD_WGMMA_WS=0 to 5 forces a mode where it applies, for
// measuring (0: never the warp-specialised kernels, but where CONVGUARD_WGMMA_PHASED=1 forces
// strided backward-data's walk, phased_bulk_allowed; 4 and 5 fall back to 1 and 2 where the bulk
// copies do not fit, or to the two-warpgroup kernel for the in-place filter, TF32 and 3D, but that
// 5 takes strided backward-data's walk where phased_bulk_fits; a bulk-copy plan has one block an
// SM, CONVGUARD_WGMMA_PER_SM aside).
// (Each read at each plan, as forced_tile says.)
inline bool tile_forced() { return forced_tile().bm != 0; }
inline int ws_forced() {
  const char* text = std::getenv("CONVGUARD_WGMMA_WS");
  if (!text) return -1;
  if (text[0] >= '0' && text[0] <= '5' && text[1] == 0) return text[0] - '0';
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr, "convguard: CONVGUARD_WGMMA_WS='%s' ignored (0 to 5)\n", text);
  return -1;
}
inline int ws_mode(bool ragged, bool split_or_phased, Tile* tile) {
  const int forced = ws_forced();
  if (ragged) return 0;
  int mode = forced;
  if (forced < 0) {
    mode = 0;
    if (!split_or_phased && !tile_forced() && tile->bm == 256 && tile->bn == 128)
      *tile = Tile{128, 128}, mode = 2;
  }
  return mode == 2 && split_or_phased ? 1 : mode;  // (3 and phased: the launch takes 1)
}

// A setting of 0 or 1 for measuring, read at each plan (so that a test can set it): its value, or
// -1 when unset or anything else (then said on stderr once: `said`, the caller's own flag).
inline int plan_switch(const char* name, std::atomic<bool>& said) {
  const char* text = std::getenv(name);
  if (text && (text[0] == '0' || text[0] == '1') && text[1] == 0) return text[0] - '0';
  if (text && !said.exchange(true))
    std::fprintf(stderr, "convguard: %s='%s' ignored (0 or 1)\n", name, text);
  return -1;
}

// Whether backward-data reads the caller's filter as B (kFilterMn) rather than a flipped copy:
// where a stage's 64 reduction rows are dy channels of one tap (K % 64 == 0) and each row's dx
// channels are whole 16-byte chunks (C % 8 == 0); other shapes take the flip (tc's kernel writes
// w' into the workspace each run; ragged C and K load element-wise from it).
// CONVGUARD_WGMMA_BWD_FLIP=1 forces the flip everywhere, for measuring.
inline bool filter_mn_for(const Problem& p) {
  const char* flip = std::getenv("CONVGUARD_WGMMA_BWD_FLIP");  // (read at each plan)
  const bool flip_forced = flip && flip[0] == '1' && flip[1] == 0;
  // Strided 3D: a phase's tap row (t', r') steps back by two strides, not one (the flipped copy).
  const bool strided_3d = p.spatial_dims == 3 && p.stride[0] * p.stride[1] * p.stride[2] > 1;
  // TF32: wgmma takes 32-bit operands K-major only (no transpose-B).
  return p.direction == Direction::backward_data && p.k % 64 == 0 && p.c % 8 == 0 && !flip_forced &&
         !strided_3d && p.dtype != DType::f32;
}

// Everything a launch needs but the tensors. Backward-data is planned as its forward problem, as
// gpu:tc_implicit_gemm plans it (tc::stride_phases): x := dy (OH x OW, K channels), w := the
// flipped filter w'[c][r][s][k] = w[k][R-1-r][S-1-s][c], padding R-1-pad (negative: dy rows
// skipped), y := dx (H x W, C channels); with stride > 1, one such problem per stride phase
// (a.phase), each with its sub-filter, all in one launch. The flipped filter is either read in
// place (filter_mn: tap (r, s) of a phase's sub-filter is the caller's KRSC tap at w_off - r * b_dr
// - s * b_ds, its C channels contiguous, so the kernel loads B MN-major) or, for the other shapes,
// written into the workspace each run by tc::forward_operands as KRSC rows of r*s*K elements.
struct WgPlan : Plan {
  explicit WgPlan(const Problem& p)
      : Plan(p), backward(p.direction == Direction::backward_data), filter_mn(filter_mn_for(p)) {
    auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
    const int vec = 16 / static_cast<int>(size_of(p.dtype));  // a chunk's elements
    if (backward) {
      filter_bytes = tc::plan_backward_data(p, i32((p.k + vec - 1) / vec * vec), a, &count);
      three_d = p.spatial_dims == 3;  // a.depth set, r = T * R (phased: each phase's)
      a.oh = a.phase[0].oh, a.ow = a.phase[0].ow, a.r = a.phase[0].r, a.s = a.phase[0].s;
      a.ph = a.phase[0].ph, a.pw = a.phase[0].pw;  // stride 1: the one phase
      if (filter_mn) plan_filter_in_place(p);
    } else {
      a.h = i32(p.input[1]), a.w_ = i32(p.input[2]), a.c = i32(p.c), a.k = i32(p.k);
      a.sh = i32(p.stride[1]), a.sw = i32(p.stride[2]);
      a.dh = i32(p.dilation[1]), a.dw = i32(p.dilation[2]);
      a.cp = i32((p.c + vec - 1) / vec * vec);
      a.oh = i32(p.output(1)), a.ow = i32(p.output(2));
      a.r = i32(p.filter[1]), a.s = i32(p.filter[2]);
      a.ph = i32(p.pad_begin[1]), a.pw = i32(p.pad_begin[2]);
      if (p.spatial_dims == 3) {  // the k3D kernel: rows over (n, od), tap rows over (t, r)
        three_d = true;
        a.depth = tc::depth_of(p);
        a.r *= i32(p.filter[0]);
      }
    }
    a.m = i32(p.n) * (three_d ? a.depth.od : 1) * a.oh * a.ow;
    static std::atomic<bool> im2col_said{false};  // (read at each plan)
    const bool im2col_forced = tc::env_int("CONVGUARD_WGMMA_IM2COL", 0, 1, &im2col_said) == 1;
    // (no padding at either end: the output grid is x's own, oh == h and ow == w)
    a.plain_x = !im2col_forced && !backward && !three_d && a.r == 1 && a.s == 1 && a.sh == 1 &&
                a.sw == 1 && a.ph == 0 && a.pw == 0 && a.oh == a.h && a.ow == a.w_;
    a.kd = a.r * a.s * a.cp;
    a.wrow = a.r * a.s * a.c;
    ragged_loads = a.cp != a.c;
    ragged = ragged_loads || a.k % 2 != 0;
    // The tile rules count stages of kBK (64) elements; an f32 stage row holds 32 (kBKOf).
    const int kd_scale = kBK / (kRowBytes / static_cast<int>(size_of(p.dtype)));
    // 3D and TF32 have no cp.async warp-specialised form (its loaders are 2D and 16-bit only): the
    // two-warpgroup kernel with the 2D tile rules, or (TF32 2D forward) the bulk-copy loaders.
    const bool two_warpgroups_only = three_d || p.dtype == DType::f32;
    if (a.phases) {
      // All phases in one launch, unsplit (they fill the GPU as tc's do), 128-pixel tiles only.
      std::int64_t total = 0;
      int widest = 0, longest = 0;
      for (int q = 0; q < a.phases; ++q) {
        total += a.phase[q].m;
        widest = std::max(widest, a.phase[q].m),
        longest = std::max(longest, a.phase[q].kd * kd_scale);
      }
      tile = tile_for(total, a.k, longest, true, false);
      a.tiles_per_split = 2147483647;
      if (phased_bulk_fits(p) && phased_bulk_allowed()) {
        plan_phased_bulk();
        return;
      }
      ws = filter_mn || two_warpgroups_only ? 0 : ws_mode(ragged, true, &tile);
      if (ws >= 4) ws = 1;  // bulk copies: the filter read in place only (phased_bulk_fits)
      grid = dim3(static_cast<unsigned>((widest + tile.bm - 1) / tile.bm),
                  static_cast<unsigned>((a.k + tile.bn - 1) / tile.bn),
                  static_cast<unsigned>(a.phases));
      per_sm = blocks_per_sm(std::int64_t{grid.x} * grid.y * grid.z, (longest + kBK - 1) / kBK,
                             tile, ragged, ws);
      return;
    }
    const std::int64_t kd = std::int64_t{a.kd} * kd_scale;  // in kBK-element stages' units
    const bool wide_tma = ws_forced() < 0 && tma_fits(p, Tile{128, 256});
    tile = tile_for(a.m, a.k, kd, ragged, filter_mn, wide_tma);
    // A loader, tile or split forced for measuring keeps its plan (no narrow or pixel-wide tiles
    // in its place, unless CONVGUARD_WGMMA_PIXELS forces a width as well).
    const bool measuring = ws_forced() >= 0 || tile_forced() || split_forced() > 0;
    const bool narrow = !measuring && narrow_pointwise(p, kd);
    if (narrow) tile = Tile{128, 64};
    // The bulk-copy loaders where they fit and pay (tma_ws_for sees tile_for's tiles, before
    // ws_mode turns 256 x 128 into the persistent cp.async kernel's 128 x 128); else the cp.async
    // warp-specialised kernels (ws_mode: they load B K-major only, 16-bit 2D), else the
    // two-warpgroup kernel. A forced mode of 4 or 5 holds for the in-place filter, TF32 and 3D too
    // (tma_fits below says whether it applies).
    ws = 0;
    if (ws_forced() < 0 && tma_fits(p, Tile{128, 128}))
      ws = tma_ws_for(a.m, a.k, (kd + kBK - 1) / kBK, p.dtype == DType::f32,
                      !filter_mn && !two_warpgroups_only, tile_forced(), &tile);
    if (ws == 0)
      ws = !filter_mn && !two_warpgroups_only ? ws_mode(ragged, false, &tile)
           : ws_forced() >= 4                 ? ws_forced()
                                              : 0;
    splits = split_count(a.m, a.k, kd, tile, filter_mn, wide_tma && !tile_forced());
    if ((ws == 2 || ws == 5) && splits > 1) --ws;  // persistent: unsplit only
    if (ws == 5 && p.dtype == DType::f32) ws = 4;  // (forced) the persistent staging is 16-bit
    if (ws >= 4 && !tma_fits(p, tile)) ws = filter_mn || two_warpgroups_only ? 0 : ws - 3;
    const int tiles = static_cast<int>((kd + kBK - 1) / kBK);
    a.tiles_per_split = std::max(1, (tiles + splits - 1) / splits);
    used = std::max(1, (tiles + a.tiles_per_split - 1) / a.tiles_per_split);  // no empty split
    grid = dim3(static_cast<unsigned>((a.m + tile.bm - 1) / tile.bm),
                static_cast<unsigned>((a.k + tile.bn - 1) / tile.bn), static_cast<unsigned>(used));
    per_sm = blocks_per_sm(std::int64_t{grid.x} * grid.y * grid.z, std::int64_t{a.tiles_per_split},
                           tile, ragged, ws);
    a.n_fast = ws == 3 ? 0 : tile_order(grid.y);  // (clusters pair blocks along M)
    // Pixel-wide tiles in place of all that where they fit and leave the busiest SM less to do
    // (pixel_wide_for): unsplit, a tile per block, channel tiles fastest (pw_tile), one grid
    // dimension (not where `measuring`, above).
    if (pixel_wide_fits(p) && (pixel_wide_forced() > 1 || (!measuring && !narrow))) {
      const std::int64_t blocks = std::int64_t{grid.x} * grid.y * grid.z;
      const std::int64_t area = std::int64_t{tile.bm} * tile.bn;
      pixels = pixel_wide_for(a.m, a.k, tiles, plan_cost(blocks, tile, a.tiles_per_split),
                              ws == 4   ? area + 1
                              : ws == 0 ? area
                                        : 0);
      const std::int64_t pw_blocks = pixels ? ((a.k + kPwChannels - 1) / kPwChannels) *
                                                  ((std::int64_t{a.m} + pixels - 1) / pixels)
                                            : 0;
      if (pw_blocks > 2147483647) pixels = 0;
      if (pixels) {
        splits = used = per_sm = 1;
        ws = 0;
        a.tiles_per_split = tiles;
        a.n_fast = 0;
        grid = dim3(static_cast<unsigned>(pw_blocks));
      }
    }
    a.bulk_store = bulk_stores(p) ? 1 : 0;
    a.split_cluster = split_clusters(p) ? 1 : 0;
    // CONVGUARD_WGMMA_PLAN=1: the plan on stderr, for measuring.
    static const bool say = tc::env_int("CONVGUARD_WGMMA_PLAN", 0, 1) == 1;
    if (say && pixels)
      std::fprintf(stderr,
                   "convguard: gpu:wgmma_implicit_gemm plan: 128 channels x %d pixels tiles "
                   "(pixel-wide), %u blocks, %d stages\n",
                   pixels, grid.x, a.tiles_per_split);
    else if (say)
      std::fprintf(stderr,
                   "convguard: gpu:wgmma_implicit_gemm plan: %d x %d tiles, %u x %u x %u blocks, "
                   "%d stages a split, loaders %d, %d a SM, %s fastest%s%s\n",
                   tile.bm, tile.bn, grid.x, grid.y, grid.z, a.tiles_per_split, ws, per_sm,
                   a.n_fast ? "N" : "M", a.bulk_store ? ", bulk stores" : "",
                   a.split_cluster ? ", splits in clusters" : "");
  }
  // Whether the persistent bulk-copy kernel (ws 5, unphased, 16-bit) stores its tiles by bulk
  // tensor copies (store_bulk in wgmma_ws_forward.cuh, WgArgs::bulk_store): where K is whole
  // 16-byte chunks (y's map's row pitch), except for tiles that store more than twice the bytes of
  // x they load (BN / 64 > 2 x their stages) and come more than 16 to an SM; else store_staged (or
  // the fragments' own stores where K is not whole chunks). Measured on the H200, bf16, the stores
  // forced on and off, interleaved (docs/gpu/2026-11-30-session18/call1): ResNet-50 b32 forward
  // res3[a-d]_branch2c 1.159x, res3a_branch1 1.084x, res2a_branch2a 1.080x, backward-data
  // res3[b-d]_branch2a 1.150x; geomean forward b32 1.018x, backward-data 1.026x, forward b256
  // 1.031x. The store-bound tile of res2a_branch2c (128 x 256 of one stage: 64 KiB stored for 16
  // of x loaded) gains at b32 (6 tiles an SM, 0.0244 -> 0.0227 ms) but ran 0.922x at b256 (48 an
  // SM, 3.5 TB/s: call2), where the memory's bandwidth, not the tile's latency, is the bound and
  // the 256 threads' stores keep more bytes in flight than one thread's bulk copies. The threshold
  // of 16 lies between those two measured points; nothing between them was measured.
  // CONVGUARD_WGMMA_BULK_STORE=0 keeps them off, =1 takes them wherever they fit (read at each
  // plan, so that a test can set it).
  // Whether the bulk-copy kernel's splits (ws 4, unphased, 16-bit) run as one cluster along z
  // and add their sums in shared memory (WgArgs::split_cluster), where K is whole 16-byte chunks
  // and the splits fit a cluster of at most kMaxSplitCluster blocks; else fp32 planes and
  // tc::launch_reduce_splits. Measured on the H200 (docs/gpu.md, "session 34"): backward-data
  // res5[a-c]_branch2c (128 x 128, split 2: 52 clusters of 2) 0.0162 / 0.0161 -> 0.0149 / 0.0143
  // ms (Nsight Compute: its reduction pass was 4.9 us after a 14.8 us main kernel); res5's 3x3
  // forward (128 x 256, split 5) as 26 clusters of 5, 0.0225 -> 0.0357 (more than fit at once
  // on 132 SMs: clusters run within a GPC). Splits of 3 and 4 verify but were not timed (no
  // ResNet-50 b32 layer plans them), hence 2. CONVGUARD_WGMMA_SPLIT_CLUSTER=0 keeps the planes,
  // =2 .. 8 sets the largest cluster (read at each plan, so that a test can set it; anything else
  // is said once and ignored).
  static constexpr int kMaxSplitCluster = 2;
  bool split_clusters(const Problem& p) const {
    if (ws != 4 || used < 2 || a.phases || three_d || ragged || p.dtype == DType::f32 ||
        a.k % 8 != 0 || tile.bm != 128)
      return false;
    int largest = kMaxSplitCluster;
    if (const char* text = std::getenv("CONVGUARD_WGMMA_SPLIT_CLUSTER")) {
      char* end = nullptr;
      const long v = std::strtol(text, &end, 10);
      if (end != text && *end == 0 && (v == 0 || (v >= 2 && v <= 8))) {
        largest = static_cast<int>(v);
      } else {
        static std::atomic<bool> said{false};  // once, not at every plan
        if (!said.exchange(true))
          std::fprintf(stderr,
                       "convguard: CONVGUARD_WGMMA_SPLIT_CLUSTER='%s' ignored (0, or 2 to 8)\n",
                       text);
      }
    }
    return used <= largest;
  }
  bool bulk_stores(const Problem& p) const {
    if (ws != 5 || a.phases || p.dtype == DType::f32 || a.k % 8 != 0) return false;
    static std::atomic<bool> said{false};
    if (const int forced = plan_switch("CONVGUARD_WGMMA_BULK_STORE", said); forced >= 0)
      return forced == 1;
    // (the persistent kernel has a block an SM: its tiles an SM are the grid's waves)
    const bool store_bound = tile.bn / 64 > 2LL * a.tiles_per_split;
    return !(store_bound && waves(std::int64_t{grid.x} * grid.y) > 16);
  }
  // 128 x 64 tiles on the persistent bulk-copy kernel (tma_ws_for takes 5 for them at up to 8
  // stages) in place of tile_for's and the pixel-wide ones, for 16-bit forward 1x1 layers of 128
  // output channels whose x is read as tiles (plain_x), with at least two waves of such tiles
  // (blocks >= 2 x SMs), and either at most 4 stages or, up to 8, at most three waves (the plan
  // asks only where nothing is forced for measuring; a forced pixel width still wins). The only
  // setting of the plans' space that beat them by 5% in both rounds of session 20's scan (H200,
  // ResNet-50 bf16, every setting forced against the plans, docs/gpu/2026-11-30-session20/call2).
  // As a rule, old build against new, three rounds interleaved, minimum of each (session 22, call
  // 2): b32 res3[b-d]_branch2a (8 stages, 392 tiles; 131 pixel-wide tiles of 192 before) 0.0151 ->
  // 0.0137 ms, res3a_branch2a (4 stages) 0.0249 -> 0.0240, b256 res3a_branch2a (4 stages; 128 x
  // 128 persistent before) 0.1614 -> 0.1510; but b256 res3[b-d]_branch2a (8 stages, 24 waves)
  // 0.0660 -> 0.0675, hence the bound: the narrow tile pays where the reduction is short, or the
  // plan it replaces left a wave's SMs idle. Not measured: b16 and below (fewer than two waves).
  bool narrow_pointwise(const Problem& p, std::int64_t kd) const {
    if (p.direction != Direction::forward || !a.plain_x || a.k != 128 || ragged ||
        p.dtype == DType::f32 || !tma_fits(p, Tile{128, 64}))
      return false;
    const std::int64_t stages = (kd + kBK - 1) / kBK,
                       blocks = 2 * ((std::int64_t{a.m} + 127) / 128);
    return stages <= 8 && blocks >= 2 * sms() && (stages <= 4 || blocks <= 3 * sms());
  }
  // Whether the pixel-wide kernel (wgmma_pixel_wide.cuh) takes the problem: 16-bit, what the
  // bulk-copy loaders take (tma_fits: 2D forward or stride-1 backward-data reading its filter in
  // place, whole stage rows of C, the im2col map's limits), K whole 16-byte chunks (its epilogue
  // stores them).
  bool pixel_wide_fits(const Problem& p) const {
    return p.dtype != DType::f32 && a.k % 8 == 0 && tma_fits(p, Tile{128, 128});
  }
  // Whether the bulk-copy (TMA) loaders (ws 4 and 5) take the plan at tile t: a 2D forward
  // problem (TF32 too), or stride-1 backward-data reading its filter in place, of taps of whole
  // stage rows (64 16-bit or 32 f32 channels: a stage is one tap's, the im2col copy's offsets are
  // the tap's), 128-pixel tiles (of 64, 128 or 256 channels), and strides, taps and corners the
  // im2col map can hold.
  bool tma_fits(const Problem& p, Tile t) const {
    const bool direction = p.direction == Direction::forward || (filter_mn && a.phases == 0);
    const int row = kRowBytes / static_cast<int>(size_of(p.dtype));  // a stage row's elements
    // The im2col map's strides, tap offsets and corners (tma::im2col_fits).
    const bool walk = tma::im2col_fits(im2col_walk(a), (a.r - 1) * a.dh, (a.s - 1) * a.dw);
    // (TF32 at 128 x 256 on these loaders compiles without spills but was never run: its plans
    // keep the two-warpgroup kernel, forced loaders too.)
    const bool width = t.bn <= 128 || p.dtype != DType::f32;
    return direction && p.spatial_dims <= 2 && !ragged && a.c % row == 0 && t.bm == 128 && width &&
           walk;
  }
  // Whether strided backward-data can take the persistent bulk-copy kernel over all its stride
  // phases' tiles (plan_phased_bulk): 16-bit 1D or 2D, the filter read in place, strides of at most
  // 2 (at most kTmaPhases phases; 3 or 4 along one axis would fit the four maps too, but were
  // neither measured nor tested on the walk), dy's channels whole stage rows, 128-pixel tiles of
  // at most 128 channels, and each phase's walk over dy one the im2col map can hold.
  bool phased_bulk_fits(const Problem& p) const {
    if (!filter_mn || p.spatial_dims > 2 || p.dtype == DType::f32 || ragged || p.stride[1] > 2 ||
        p.stride[2] > 2 || a.phases > kTmaPhases || a.c % kBK != 0 || tile.bm != 128 ||
        tile.bn > 128)
      return false;
    for (int q = 0; q < a.phases; ++q) {
      const tc::Geo& g = a.phase[q];
      if (phase_has_taps(g) && !tma::im2col_fits(phase_walk(a, g), g.r - 1, g.s - 1)) return false;
    }
    return true;
  }
  // Whether that kernel is taken over the two-warpgroup kernel's phased grid (two blocks an SM):
  // wherever it fits, unless a setting for measuring says otherwise. Measured on the H200,
  // ResNet-50 b32 bf16, the six stride-2 layers interleaved, the grid against the walk
  // (docs/gpu/2026-11-29-session17/call2, ms): res3a_branch2b 0.0386 -> 0.0338, res3a_branch1
  // 0.0521 -> 0.0345, res4a_branch2b 0.0317 -> 0.0289, res4a_branch1 0.0362 -> 0.0283,
  // res5a_branch2b 0.0347 -> 0.0267, res5a_branch1 0.0276 -> 0.0247 (the 1x1 layers: three phases
  // without taps, their tiles zeros, store_zero_tiles).
  // Before the producer's idle warps stored the tiles of zeros, the consumers did, between their
  // own, and res5a_branch1 (104 tiles with taps, 312 of zeros) ran 0.0276 ms on the grid against
  // 0.0287 on the walk; it kept the grid (session 16). CONVGUARD_WGMMA_PHASED=1 takes the walk
  // wherever it fits, =0 never, whatever CONVGUARD_WGMMA_WS says (read at each plan, so that a test
  // can set it); else CONVGUARD_WGMMA_WS=5 takes it where it fits, =0 to 4 never.
  bool phased_bulk_allowed() const {
    static std::atomic<bool> said{false};
    if (const int forced = plan_switch("CONVGUARD_WGMMA_PHASED", said); forced >= 0)
      return forced == 1;
    return ws_forced() < 0 || ws_forced() == 5;
  }
  // Stride phase q's output tiles at the plan's tile.
  std::int64_t phase_tiles(int q) const {
    return (std::int64_t{a.phase[q].m} + tile.bm - 1) / tile.bm * ((a.k + tile.bn - 1) / tile.bn);
  }
  // The persistent bulk-copy kernel (ws 5, one block an SM) walking the phases' tiles as a snake
  // (TileWalk), the phases sorted longest reduction first: the shortest tiles come last, and the
  // phases without taps (kd 0: tiles of zeros, which the producer's idle warps store; TileWalk's
  // `zeros` walk takes the list's tail from the first of them) after every phase with taps.
  // (a.phase_depth, 3D's, is not sorted with them: phased_bulk_fits takes 2D alone.)
  void plan_phased_bulk() {
    std::stable_sort(a.phase, a.phase + a.phases,
                     [](const tc::Geo& l, const tc::Geo& r) { return l.kd > r.kd; });
    std::int64_t tiles = 0;
    for (int q = 0; q < a.phases; ++q) tiles += phase_tiles(q);
    ws = 5, per_sm = 1, a.n_fast = 0;
    grid = dim3(static_cast<unsigned>(std::min<std::int64_t>(tiles, 2147483647)));
    static const bool say = tc::env_int("CONVGUARD_WGMMA_PLAN", 0, 1) == 1;
    if (say)
      std::fprintf(stderr,
                   "convguard: gpu:wgmma_implicit_gemm plan: %d x %d tiles, %d stride phases, "
                   "%lld tiles in one persistent walk (bulk copies), longest %d stages\n",
                   tile.bm, tile.bn, a.phases, static_cast<long long>(tiles),
                   (a.phase[0].kd + kBK - 1) / kBK);
  }
  // Backward-data's flipped filter first (16-byte aligned for cp.async), then split-K's partials.
  std::size_t partial_bytes() const {
    return splits > 1 && !a.split_cluster
               ? static_cast<std::size_t>(splits) * a.m * a.k * sizeof(float)
               : 0;
  }
  std::size_t workspace() const { return filter_bytes + partial_bytes(); }
  // filter_mn: no workspace for the filter; each phase's w_off becomes the element offset of its
  // sub-filter's tap (0, 0) in the caller's filter (first_tap for stride 1, whose kernel reads no
  // phase), and b_krow, b_dr, b_ds the steps around it (WgArgs).
  void plan_filter_in_place(const Problem& p) {
    filter_bytes = 0;
    const auto c = static_cast<int>(p.c), s_all = static_cast<int>(p.filter[2]);
    const auto sh = static_cast<int>(p.stride[1]), sw = static_cast<int>(p.stride[2]);
    a.b_krow = static_cast<int>(p.taps()) * c;
    a.b_dr = sh * s_all * c, a.b_ds = sw * c;
    for (int q = 0; q < count; ++q) {
      tc::Geo& g = a.phase[q];
      const int r0 = static_cast<int>((g.qh + p.pad_begin[1]) % sh);
      const int s0 = static_cast<int>((g.qw + p.pad_begin[2]) % sw);
      g.w_off = g.r > 0 && g.s > 0 ? ((r0 + (g.r - 1) * sh) * s_all + s0 + (g.s - 1) * sw) * c : 0;
    }
    first_tap = a.phase[0].w_off;
  }
  WgArgs a{};
  // ragged: the plan of the two-warpgroup kernel's 128-pixel tiles, its outputs stored one by one
  // (c not a multiple of 8, or k odd); ragged_loads: its loads element by element too (kRagged).
  bool backward, filter_mn, ragged = false, ragged_loads = false, three_d = false;
  int first_tap = 0;
  // 1, 2: the warp-specialised kernel, 2 persistent; 3 its cluster form; 4, 5: as 1, 2 with
  // bulk-copy loaders (wgmma_ws_forward.cuh; ws_mode, tma_ws_for)
  int ws = 0;
  Tile tile{128, 128};
  int splits = 1, used = 1;
  int per_sm = 1;  // 2: 128 x 128 tiles two blocks an SM (kStagesTwoPerSm; blocks_per_sm)
  int pixels = 0;  // pixel-wide tiles' width (wgmma_pixel_wide.cuh; pixel_wide_for), 0: not them
  std::size_t filter_bytes = 0;
  int count = 1;  // backward-data's stride phases (a.phase: their geometry)
  dim3 grid;
};

}  // namespace convguard::gpu::wgf
