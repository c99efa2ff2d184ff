// Where a bulk-copy producer's next stage reads, advanced by carries instead of located by
// division. The Hopper kernels' producers are one thread that issues every stage's copies; the
// divisions by run-time values that located each stage (kk / C, tap / S; p / OW, p / (OW * OH))
// were on every stage's critical path: the wait for a free stage, then that arithmetic, then the
// copies, whose arrival the consumers wait for. On the H200 two such divisions a stage took a
// 128 x 64 tile's stage from 244 to 383 ns (bench/wgmma_stage_floor.cu's pipeline alone, with and
// without them; docs/gpu/2026-12-01-session24, call 8). Each cursor divides once, where a tile
// starts, and then only adds and compares.
#pragma once

namespace convguard::gpu::wg {

// The reduction position of a stage of `step` channels: tap (r, s) of a filter S taps wide and the
// channel c within the tap, for C a whole number of steps (the bulk copies' rule: a stage is one
// tap's row of channels). Starts at reduction column kk.
struct TapCursor {
  int c, r, s;
  __device__ __forceinline__ TapCursor(int kk, int channels, int taps_s) {
    const int tap = kk / channels;
    r = tap / taps_s, s = tap - r * taps_s, c = kk - tap * channels;
  }
  __device__ __forceinline__ void advance(int step, int channels, int taps_s) {
    c += step;
    if (c >= channels) {
      c -= channels;
      if (++s == taps_s) s = 0, ++r;
    }
  }
};

// A pixel of an images x oh x ow grid (img, i, j), stepped by a fixed number of pixels: the step
// split once into whole rows (di) and a remainder (dj), so that a step is two adds and its carries
// (a step of several images' worth carries through the while loop, once per image).
struct PixelCursor {
  int img, i, j, di, dj;
  __device__ __forceinline__ PixelCursor(int p, int step, int oh, int ow) {
    j = p % ow, i = p / ow % oh, img = p / ow / oh;
    di = step / ow, dj = step % ow;
  }
  __device__ __forceinline__ void advance(int oh, int ow) {
    j += dj, i += di;
    if (j >= ow) j -= ow, ++i;
    while (i >= oh) i -= oh, ++img;
  }
};

}  // namespace convguard::gpu::wg
