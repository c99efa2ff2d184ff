// gpu:tc_implicit_gemm's backward-data geometry: stride phases and their flipped sub-filters.
//
// dx[ih] = sum over taps r and dy rows oh with oh * st - pad + r = ih. Write ih = i * st + q for a
// phase q in [0, st): the taps that reach it are r = r0 + j * st with r0 = (q + pad) % st, and
// oh = i + t - j with t = (q + pad) / st. So the phase's pixels (i) are a stride-1 forward
// convolution of dy with the sub-filter w'[j'] = w[r0 + (R' - 1 - j') * st] (R' taps, flipped),
// padded R' - 1 - t at the beginning (negative: the first dy rows are skipped). In 2D the phases
// are the st_h * st_w pairs, in 3D the st_d * st_h * st_w triples (the depth axis as the others);
// a phase reached by no tap (R' = 0: a 1x1 filter's odd rows under stride 2) is a GEMM with an
// empty reduction, which writes zeros. Stride 1 is the one phase with the whole filter flipped and
// padding R - 1 - pad.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "gpu/check.hpp"
#include "gpu/runtime.hpp"
#include "gpu/solvers/tc_implicit_gemm_args.cuh"

namespace convguard::gpu::tc {
namespace {

// One axis of a phase: its first tap, tap count, padding and pixel count.
struct Axis {
  int first, taps, pad, pixels;
};
Axis phase_axis(int q, int stride, int pad, int taps, int size) {
  Axis a{};
  a.first = (q + pad) % stride;
  a.taps = a.first < taps ? (taps - a.first + stride - 1) / stride : 0;
  a.pad = a.taps - 1 - (q + pad) / stride;
  a.pixels = q < size ? (size - q + stride - 1) / stride : 0;
  return a;
}

// The phases' sub-filters, for the filter kernel: phase i covers the global sub-filter taps
// first[i] .. first[i] + tq[i] * rq[i] * sq[i] - 1 (their sum is T * R * S: each tap is in one
// phase; 2D: T = 1).
struct PhaseTable {
  int count;
  int first[kMaxPhases], tq[kMaxPhases], rq[kMaxPhases], sq[kMaxPhases], t0[kMaxPhases],
      r0[kMaxPhases], s0[kMaxPhases], off[kMaxPhases];
};

// wt[off + (c * taps + t) * k + kk] = w[kk][tap(t)][c] through 32x32 shared-memory tiles, so both
// the reads (along c) and the writes (along k) are coalesced. Moves element bits (2 or 4 bytes).
template <typename E>
__global__ void phase_filters(const E* w, E* wt, int k, int c, int r_all, int s_all, int sd, int sh,
                              int sw, int taps_all, PhaseTable t) {
  __shared__ E tile[32][33];
  const int c0 = blockIdx.x * 32, k0 = blockIdx.y * 32, tx = threadIdx.x;
  for (int gt = blockIdx.z; gt < taps_all; gt += gridDim.z) {
    int q = 0;
#pragma unroll
    for (int i = 1; i < kMaxPhases; ++i)
      if (i < t.count && gt >= t.first[i]) q = i;
    int first = 0, tq = 1, rq = 1, sq = 1, t0 = 0, r0 = 0, s0 = 0, off = 0;
#pragma unroll
    for (int i = 0; i < kMaxPhases; ++i)
      if (i == q)
        first = t.first[i], tq = t.tq[i], rq = t.rq[i], sq = t.sq[i], t0 = t.t0[i], r0 = t.r0[i],
        s0 = t.s0[i], off = t.off[i];
    const int tt = gt - first, jw = tt % sq, jh = tt / sq % rq, jt = tt / sq / rq;
    const int taps = tq * rq * sq;
    const int from = ((t0 + (tq - 1 - jt) * sd) * r_all + r0 + (rq - 1 - jh) * sh) * s_all + s0 +
                     (sq - 1 - jw) * sw;
    for (int i = threadIdx.y; i < 32; i += 8)
      if (k0 + i < k && c0 + tx < c)
        tile[i][tx] = w[(static_cast<std::int64_t>(k0 + i) * taps_all + from) * c + c0 + tx];
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8)
      if (c0 + i < c && k0 + tx < k)
        wt[off + (static_cast<std::int64_t>(c0 + i) * taps + tt) * k + k0 + tx] = tile[tx][i];
    __syncthreads();
  }
}

}  // namespace

int stride_phases(const Problem& p, int cp, Geo (&out)[kMaxPhases],
                  PhaseDepth (&depths)[kMaxPhases], std::int64_t* filter_elements) {
  auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
  const int sd = i32(p.stride[0]), sh = i32(p.stride[1]), sw = i32(p.stride[2]);
  std::int64_t off = 0;
  int count = 0;
  for (int qd = 0; qd < sd; ++qd)
    for (int qh = 0; qh < sh; ++qh)
      for (int qw = 0; qw < sw; ++qw) {
        const Axis z = phase_axis(qd, sd, i32(p.pad_begin[0]), i32(p.filter[0]), i32(p.input[0]));
        const Axis v = phase_axis(qh, sh, i32(p.pad_begin[1]), i32(p.filter[1]), i32(p.input[1]));
        const Axis u = phase_axis(qw, sw, i32(p.pad_begin[2]), i32(p.filter[2]), i32(p.input[2]));
        // taps_r at least 1: a phase no row tap reaches (g.r = 0) divides no tap row by zero.
        depths[count] = PhaseDepth{z.pixels, z.pad, std::max(v.taps, 1), qd};
        Geo& g = out[count++];
        g = Geo{};
        g.oh = v.pixels, g.ow = u.pixels;
        g.r = v.taps, g.s = u.taps;
        g.ph = v.pad, g.pw = u.pad;
        g.m = i32(p.n) * g.oh * g.ow;
        // 3D (tc::Depth): the rows count the phase's dx depth too, the tap rows its sub-filter's
        // depth (tr = t * R' + r), so at stride 1 the flip reverses tr: w'[tr'] = w[T R - 1 - tr'].
        if (p.spatial_dims == 3) g.m *= z.pixels, g.r *= z.taps;
        g.kd = g.r * g.s * cp;
        g.wrow = g.r * g.s * i32(p.k);
        g.w_off = i32(off);
        g.qh = qh, g.qw = qw;
        // Each sub-filter starts 128-byte aligned (64 elements): the aligned path's 16-byte loads.
        off += (static_cast<std::int64_t>(g.r) * g.s * p.c * p.k + 63) / 64 * 64;
      }
  *filter_elements = off;
  return count;
}

Status launch_phase_filters(const Problem& p, const Geo* phases, const PhaseDepth* depths,
                            int count, const void* w, void* wt, std::size_t elem) {
  PhaseTable t{};
  t.count = count;
  int first = 0;
  for (int i = 0; i < count; ++i) {
    const Geo& g = phases[i];
    // A phase's taps: its Geo's r counts the tap rows (t', r') in 3D (tq rows of R' each).
    const int rq = depths[i].taps_r, tq = rq > 0 ? g.r / rq : 0;
    t.first[i] = first;
    t.tq[i] = tq, t.rq[i] = rq, t.sq[i] = g.s;
    t.t0[i] = static_cast<int>((depths[i].qd + p.pad_begin[0]) % p.stride[0]);
    t.r0[i] = static_cast<int>((g.qh + p.pad_begin[1]) % p.stride[1]);
    t.s0[i] = static_cast<int>((g.qw + p.pad_begin[2]) % p.stride[2]);
    t.off[i] = g.w_off;
    first += g.r * g.s;
  }
  const int k = static_cast<int>(p.k), c = static_cast<int>(p.c);
  const int taps = static_cast<int>(p.taps());
  const int r = static_cast<int>(p.filter[1]), s = static_cast<int>(p.filter[2]);
  const int sd = static_cast<int>(p.stride[0]), sh = static_cast<int>(p.stride[1]),
            sw = static_cast<int>(p.stride[2]);
  const dim3 grid(static_cast<unsigned>((c + 31) / 32), static_cast<unsigned>((k + 31) / 32),
                  static_cast<unsigned>(std::min(taps, 65535)));
  if (elem == 4)
    phase_filters<<<grid, dim3(32, 8)>>>(static_cast<const std::uint32_t*>(w),
                                         static_cast<std::uint32_t*>(wt), k, c, r, s, sd, sh, sw,
                                         taps, t);
  else
    phase_filters<<<grid, dim3(32, 8)>>>(static_cast<const std::uint16_t*>(w),
                                         static_cast<std::uint16_t*>(wt), k, c, r, s, sd, sh, sw,
                                         taps, t);
  return check_launch("gpu:tc_implicit_gemm backward-data filter flip");
}

namespace {

// Every size, stride and padding is an int in the kernels' arguments (a padding of 2^32 became 0),
// and so is every product the loaders form of them: an output position times the stride, a tap
// times the dilation, a padded input extent.
Status arguments_fit(const Problem& p) {
  constexpr std::int64_t kIntLimit = std::int64_t{1} << 30;
  constexpr double kProductLimit = 2147483647.0;
  for (int i = 0; i <= 2; ++i) {  // depth too: a 3D problem's (the k3D kernels)
    for (const std::int64_t v : {p.input[i], p.output(i), p.filter[i], p.stride[i], p.dilation[i],
                                 p.pad_begin[i], p.pad_end[i]})
      if (v >= kIntLimit || v <= -kIntLimit)
        return not_applicable("a size, stride or padding beyond 32-bit kernel arguments");
    const double out = static_cast<double>(p.output(i)), in = static_cast<double>(p.input[i]);
    if (out * p.stride[i] >= kProductLimit ||
        static_cast<double>(p.filter[i]) * p.dilation[i] >= kProductLimit ||
        in + std::abs(p.pad_begin[i]) + std::abs(p.pad_end[i]) + out * p.stride[i] >= kProductLimit)
      return not_applicable("a size, stride or padding beyond 32-bit kernel arguments");
  }
  return Status::ok();
}

}  // namespace

Status bwd_weights_fits(const Problem& p) {
  if (auto s = arguments_fit(p); !s) return s;
  const double pixels = static_cast<double>(p.n) * p.output(0) * p.output(1) * p.output(2);
  const double cols = static_cast<double>(p.c + 8) * p.taps();  // padded to chunks (ragged)
  if (pixels >= 2e9 || cols >= 2e9 || static_cast<double>(p.k) >= 2e9 ||
      static_cast<double>(p.n) * p.input[0] * p.input[1] * p.input[2] * p.c >= 9e18)
    return not_applicable("sizes beyond 32-bit GEMM indexing");
  // Columns on the grid's y (at most 65535 blocks), tiles at least 128 wide.
  if ((cols + 127) / 128 > 65535) return not_applicable("grid too large");
  return Status::ok();
}

Status gemm_fits(const Problem& p) {
  if (auto s = arguments_fit(p); !s) return s;
  const bool bwd = p.direction == Direction::backward_data;
  const std::int64_t red = bwd ? p.k : p.c, out = bwd ? p.c : p.k;
  // Depth counts (input[0] and output(0): 1 in 2D).
  const double m = static_cast<double>(p.n) * (bwd ? p.input[0] * p.input[1] * p.input[2]
                                                   : p.output(0) * p.output(1) * p.output(2));
  const double src =
      static_cast<double>(p.n) * red *
      (bwd ? p.output(0) * p.output(1) * p.output(2) : p.input[0] * p.input[1] * p.input[2]);
  if (m >= 2e9 || static_cast<double>(red + 8) * p.taps() >= 2e9 || src >= 9e18 ||
      (bwd && static_cast<double>(p.c) * p.k * p.taps() + 64.0 * kMaxPhases >= 2e9))
    return not_applicable("sizes beyond 32-bit GEMM indexing");
  // The filter flip's grid has a y block per 32 of K (launch_phase_filters).
  if ((m + 127) / 128 > 2147483647.0 || (out + 63) / 64 > 65535 || (bwd && (p.k + 31) / 32 > 65535))
    return not_applicable("grid too large");
  return Status::ok();
}

Status forward_operands(const Problem& p, const Geo* phases, const PhaseDepth* depths, int count,
                        const ConvTensors& t, void* wt, Operands* out) {
  if (p.direction != Direction::backward_data) {
    *out = {t.x.data, t.w.data, t.y.data};
    return Status::ok();
  }
  // dx = forward(dy, flipped w): the GEMM's output channels are the caller's C, its reduction K.
  *out = {t.y.data, wt, t.x.data};
  return launch_phase_filters(p, phases, depths, count, t.w.data, wt, size_of(p.dtype));
}

}  // namespace convguard::gpu::tc
