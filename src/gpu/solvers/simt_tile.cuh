// gpu:simt_gemm's tile (simt_gemm.cu: forward and backward-data; simt_gemm_bwdw.cu:
// backward-weights): 256 threads compute kMT*16 x 128 outputs, each thread kMT x 8 (rows ty*4 + i
// and 64 + ty*4 + i, columns tx*4 + j and 64 + tx*4 + j; a warp is 4 x 8 threads, so its float4
// reads of a step touch 4 distinct A and 8 distinct B addresses: no bank conflicts), the
// reduction in steps of kBK through shared memory; and the split-K count's time model.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "gpu/runtime.hpp"

namespace convguard::gpu::simt {

constexpr int kBN = 128, kBK = 8, kThreads = 256;

// The thread's place in the tile.
__device__ __forceinline__ void thread_tile(int tid, int& tx, int& ty) {
  const int lane = tid % 32, warp = tid / 32;
  tx = (warp % 2) * 8 + lane % 8, ty = (warp / 2) * 4 + lane / 8;
}

// One reduction step: acc[i][j] += A[kk][row i] * B[kk][column j] for the kBK rows of the stage,
// exact fp32 FMAs.
template <int kMT, int kALen, int kBLen>
__device__ __forceinline__ void tile_step(const float (&As)[kBK][kALen],
                                          const float (&Bs)[kBK][kBLen], float (&acc)[kMT][8],
                                          int tx, int ty) {
#pragma unroll
  for (int kk = 0; kk < kBK; ++kk) {
    float av[kMT];
#pragma unroll
    for (int h = 0; h < kMT / 4; ++h) {
      const float4 v = *reinterpret_cast<const float4*>(&As[kk][h * 64 + ty * 4]);
      av[4 * h] = v.x, av[4 * h + 1] = v.y, av[4 * h + 2] = v.z, av[4 * h + 3] = v.w;
    }
    const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
    const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][64 + tx * 4]);
    const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
  }
}

// The split of the reduction: the count s (1..max_splits, each split at least 32 steps) that
// minimises a time model: the unsplit work at about 40 TFLOP/s (the kernel's rate on ResNet-50's
// 1x1 layers on an H100), stretched by the last round of blocks (blocks * s over the SMs, whole
// rounds), plus the partials' traffic (each split writes and the reduction reads K x cols fp32: 8
// bytes each, at about 1.5 TB/s). Fitted to forced splits 1-8 on ResNet-50 b32 forward
// (docs/gpu.md): splitting pays only for long reductions over few tiles.
inline int split_for(std::int64_t blocks, int sms, int steps, double outputs, int max_splits) {
  if (sms <= 0 || blocks <= 0) return 1;
  const double ideal = 2.0 * outputs * steps * kBK / 40e12;
  auto cost = [&](int s) {
    const double rounds = static_cast<double>((blocks * s + sms - 1) / sms);
    return ideal * rounds * sms / static_cast<double>(blocks * s) +
           (s > 1 ? s * outputs * 8 / 1.5e12 : 0.0);
  };
  int best = 1;
  for (int s = 2; s <= max_splits && steps / s >= 32; ++s)
    if (cost(s) < 0.97 * cost(best)) best = s;
  return best;
}

// The current device's multiprocessor count (0 when unknown: no split), read once.
int multiprocessors();

// A GEMM's launch: rows per thread (8: 128-row tiles; 4: 64-row tiles, for at most 64 rows), the
// reduction's split and the grid (x: column tiles, y: row tiles, z: splits).
struct Grid {
  int mt = 8, splits = 1, steps_per_split = 1;
  dim3 grid;
  // The splits' fp32 partials, [split][rows][cols] (0 unsplit).
  std::size_t partial_bytes(int rows, int cols) const {
    return splits > 1 ? static_cast<std::size_t>(splits) * rows * cols * sizeof(float) : 0;
  }
};

// rows x cols outputs over `steps` reduction steps; CONVGUARD_SIMT_SPLIT=N forces the split, for
// measuring.
inline Grid plan_grid(int rows, int cols, int steps, int max_splits) {
  Grid g;
  g.mt = rows <= 64 ? 4 : 8;
  const int bm = 16 * g.mt;
  const std::int64_t blocks =
      static_cast<std::int64_t>((cols + kBN - 1) / kBN) * ((rows + bm - 1) / bm);
  g.splits =
      split_for(blocks, multiprocessors(), steps, static_cast<double>(rows) * cols, max_splits);
  if (const char* e = std::getenv("CONVGUARD_SIMT_SPLIT")) g.splits = std::max(1, std::atoi(e));
  while (g.splits > 1 && static_cast<std::int64_t>(g.splits) * rows * cols > 0x7fffffff) --g.splits;
  g.steps_per_split = std::max(1, (steps + g.splits - 1) / g.splits);
  g.splits = std::max(1, (steps + g.steps_per_split - 1) / g.steps_per_split);  // none empty
  g.grid = dim3(static_cast<unsigned>((cols + kBN - 1) / kBN),
                static_cast<unsigned>((rows + bm - 1) / bm), static_cast<unsigned>(g.splits));
  return g;
}

// Blocks of 256 threads for a grid-stride pass over `total` elements (the split reductions).
inline unsigned pass_blocks(std::int64_t total) {
  return static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 4096));
}

inline bool aligned16(const void* q) {
  return reinterpret_cast<std::uintptr_t>(q) % 16 == 0;
}

// The steps step0 .. step1 - 1 of one block: the first loaded and stored to buffer 0, then each
// step's successor loaded into registers while the step is computed, stored to the other buffer,
// one barrier a step (the barrier also orders the next step's stores after this step's reads).
template <typename Load, typename Store, typename Compute>
__device__ __forceinline__ void pipeline(int step0, int step1, Load&& load, Store&& store,
                                         Compute&& compute) {
  if (step0 < step1) {
    load(step0);
    store(0);
  }
  __syncthreads();
  for (int step = step0; step < step1; ++step) {
    const int buf = (step - step0) & 1;
    const bool more = step + 1 < step1;
    if (more) load(step + 1);  // in flight while this step is computed
    compute(buf);
    if (more) store(buf ^ 1);
    __syncthreads();
  }
}

}  // namespace convguard::gpu::simt
