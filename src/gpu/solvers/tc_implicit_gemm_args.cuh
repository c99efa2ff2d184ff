// gpu:tc_implicit_gemm's launch arguments, shared by its forward kernel (tc_implicit_gemm.cu) and
// backward-data's stride-phase planning and filter kernel (tc_bwd_data_strided.cu). CUDA only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"
#include "convguard/tensor.hpp"

namespace convguard::gpu::tc {

// Backward-data with stride sh x sw is sh*sw stride-1 convolutions (stride phases), at most this
// many (stride 4 x 4).
constexpr int kMaxPhases = 16;

// The GEMM's geometry: one for a forward (or stride-1 backward-data) problem, one per stride phase
// for strided backward-data.
struct Geo {
  int oh, ow;  // dst pixels computed: the GEMM's M = n * oh * ow
  int r, s;    // filter taps (a phase's sub-filter; 0: no tap reaches these pixels)
  int ph, pw;  // padding at the beginning (negative: src rows skipped)
  int m;       // GEMM M
  int kd;      // reduction length r * s * cp (cp: channels padded to a whole 16-byte chunk)
  int wrow;    // filter row (output channel) length in elements: r * s * c
  int w_off;   // filter's first element (a phase's sub-filter in the workspace)
  int qh, qw;  // phased: dst pixel (i, j) is y's (i * sh + qh, j * sw + qw)
};

// A 3D problem's depth, for the loaders of the tensor-core kernels' k3D forms. In the implicit
// GEMMs (gpu:tc_implicit_gemm, gpu:wgmma_implicit_gemm) the GEMM rows are then the (n, od, oh, ow)
// output pixels (dense NDHWC y) and the reduction runs over (t, r, s, c), the KTRSC filter's own
// element order, with the depth tap t and the row tap r counted as one tap row tr = t * R + r:
// the (tr, s, c) walk of the reduction, the filter tile and the output are the 2D kernels', and
// only a row's source address learns the depth (tap_source_3d, tc_common.cuh); backward-data at
// stride 1 is the same on dy (plan_backward_data). The backward-weights kernels count their
// pixels over (n, od, oh, ow) and their columns over (t, r, s, c). Unused in 2D.
struct Depth {
  int d, od, sd, dd, pd;  // input depth, output depth, stride, dilation, front padding
  int taps_r;  // the filter's R (a stride phase's: its R', PhaseDepth): tap row tr is depth tap
               // tr / R and row tap tr % R
};

// Strided 3D backward-data: a stride phase's depth, beside its Geo (whose r then counts the phase's
// tap rows T' * R'). The phase's GEMM rows are its (n, od, i, j) pixels, od of them in depth, and
// its loader's Depth is the problem's (dy's depth, stride and dilation 1) with this od, the
// sub-filter's padding pd and row taps taps_r (R'); its pixel (n, id, i, j) lands on dx's depth
// id * sd_y + qd (Args::yd, sd_y). The phases are ordered qd, qh, qw, the 2D ones' order within
// each depth phase.
struct PhaseDepth {
  int od, pd, taps_r, qd;
};

// The depth of a forward 3D problem (Depth above; backward-data's: plan_backward_data).
inline Depth depth_of(const Problem& p) {
  auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
  return {i32(p.input[0]),    i32(p.output(0)),    i32(p.stride[0]),
          i32(p.dilation[0]), i32(p.pad_begin[0]), i32(p.filter[1])};
}

struct Args {
  const void* x;
  const void* w;
  void* y;
  int n, h, w_, c, k, sh, sw, dh, dw;
  int cp;               // c rounded up to a 16-byte chunk (c when the channel runs are aligned)
  int tiles_per_split;  // reduction tiles each blockIdx.z computes (not phased)
  float* partial;       // split-K: fp32 partial sums [split][m][k]; null: write y directly
  Geo g;                // the geometry when not phased
  int phases;           // 0: dense y, blockIdx.z is the split; else blockIdx.z is the phase
  int yh, yw;           // phased: y's pixel rows and columns
  int sh_y, sw_y;       // phased: the stride grid of a phase's pixels in y
  Geo phase[kMaxPhases];
  Depth depth;  // a 3D problem's (the k3D kernel; last, so the 2D kernels' offsets stay)
  // Strided 3D backward-data (phased k3D kernel): each phase's depth, dx's depth and the stride
  // grid of a phase's depth in it.
  PhaseDepth phase_depth[kMaxPhases];
  int yd, sd_y;
};

// The phased k3D kernels' (tc_forward, wgmma's forward_body; A: Args or WgArgs) depth of this
// block's stride phase (blockIdx.z), taken field by field: a reference into the kernel's parameters
// turns every later use into a load through it.
template <typename A>
__device__ __forceinline__ void take_phase_depth(const A& a, PhaseDepth& out) {
#pragma unroll
  for (int q = 0; q < kMaxPhases; ++q)
    if (q == static_cast<int>(blockIdx.z))
      out.od = a.phase_depth[q].od, out.pd = a.phase_depth[q].pd,
      out.taps_r = a.phase_depth[q].taps_r, out.qd = a.phase_depth[q].qd;
}

// dx's pixel (i, j) of a stride phase's oh x ow grid in y's plane `plane`, on y's stride grid at
// (qh, qw).
template <typename A>
__device__ __forceinline__ std::int64_t phase_pixel_at(const A& a, std::int64_t plane, int i, int j,
                                                       int qh, int qw) {
  return (plane * a.yh + i * a.sh_y + qh) * a.yw + j * a.sw_y + qw;
}

// dx's pixel of a stride phase's GEMM row (both kernels' epilogues): the phase's pixel (img, i, j)
// of oh x ow, on y's stride grid at (qh, qw); k3D: img counts (n, id), id on dx's depth grid at
// dp.qd (dp: the phase's depth, take_phase_depth).
template <bool k3D, typename A>
__device__ __forceinline__ std::int64_t phase_pixel(const A& a, int row, int oh, int ow, int qh,
                                                    int qw, const PhaseDepth& dp) {
  const int j = row % ow, t = row / ow, i = t % oh, img = t / oh;
  std::int64_t plane = img;  // y's (n) or (n, depth) of this pixel
  if constexpr (k3D) {
    const int n = img / dp.od, id = img % dp.od;
    plane = static_cast<std::int64_t>(n) * a.yd + id * a.sd_y + dp.qd;
  }
  return phase_pixel_at(a, plane, i, j, qh, qw);
}

// Whether the forward GEMM that computes p (backward-data's: M pixels of dx, reduction over K,
// the flipped (sub-)filters in the workspace) fits 32-bit indexing and a grid of tiles of 128
// pixels x 64 channels or wider; else not_applicable with the reason.
Status gemm_fits(const Problem& p);

// What the implicit GEMMs (gpu:tc_implicit_gemm, gpu:wgmma_implicit_gemm) need of a backward-data
// problem, 1D, 2D or 3D: dilation 1, and at most kMaxPhases stride phases (the product of the
// strides; tc::stride_phases). Anything else passes (not backward-data: nothing to check).
inline Status backward_data_fits(const Problem& p) {
  if (p.direction != Direction::backward_data) return Status::ok();
  if (p.dilation[0] != 1 || p.dilation[1] != 1 || p.dilation[2] != 1)
    return not_applicable("backward-data with dilation 1 only (dilated: gpu:implicit_gemm)");
  if (static_cast<double>(p.stride[0]) * p.stride[1] * p.stride[2] > kMaxPhases)
    return not_applicable(
        "backward-data with at most 16 stride phases (stride_d * stride_h * stride_w <= 16; more: "
        "gpu:implicit_gemm)");
  return Status::ok();
}

// Whether backward-weights' GEMM (dw[K][R*S*C] over N*OH*OW pixels: gpu:tc_bwd_weights,
// gpu:wgmma_bwd_weights) fits their int arguments and a grid of tiles 128 columns wide or wider;
// else not_applicable with the reason.
Status bwd_weights_fits(const Problem& p);

// Strided backward-data's phases (Geo with the caller's C as the GEMM's N and K as the
// reduction; 3D: over (qd, qh, qw), each phase's depth into depths), their sub-filters packed one
// after another as [c][tap][k], tap (t', r', s') of a 3D one at (t' * R' + r') * S' + s'; returns
// the count.
int stride_phases(const Problem& p, int cp, Geo (&out)[kMaxPhases],
                  PhaseDepth (&depths)[kMaxPhases], std::int64_t* filter_elements);

// Backward-data planned as forward problems over its stride phases (both tensor-core solvers'
// arguments, A: tc::Args or the wgmma kernel's): src dy (OH x OW, K channels, padded to cp), the
// caller's C as the output channels, the phases into a.phase (3D: their depths into
// a.phase_depth) and, when strided, their count and output grid into a.phases, yh, yw, sh_y, sw_y
// (3D: yd, sd_y). A 3D problem's a.depth is dy's, with the first phase's od, pd and taps_r (stride
// 1: the one phase's, padding T - 1 - pad). Sets *count (1: stride 1, dense dx) and returns the
// (sub-)filters' workspace bytes, rounded to 256 (what follows them stays aligned).
template <typename A>
std::size_t plan_backward_data(const Problem& p, int cp, A& a, int* count) {
  auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
  a.h = i32(p.output(1)), a.w_ = i32(p.output(2)), a.c = i32(p.k), a.k = i32(p.c);
  a.sh = a.sw = a.dh = a.dw = 1;
  a.cp = cp;
  std::int64_t elements = 0;
  *count = stride_phases(p, cp, a.phase, a.phase_depth, &elements);
  if (*count > 1) {
    a.phases = *count;
    a.yh = i32(p.input[1]), a.yw = i32(p.input[2]);
    a.sh_y = i32(p.stride[1]), a.sw_y = i32(p.stride[2]);
    a.yd = i32(p.input[0]), a.sd_y = i32(p.stride[0]);
  }
  if (p.spatial_dims == 3) {
    const PhaseDepth& first = a.phase_depth[0];
    a.depth = {i32(p.output(0)), first.od, 1, 1, first.pd, first.taps_r};
  }
  return (static_cast<std::size_t>(elements) * size_of(p.dtype) + 255) / 256 * 256;
}

// Writes the phases' sub-filters of w (KRSC, k and c of the caller's problem) into wt: phase q's
// wt[q.w_off + (c * taps + t) * k + kk] = w[kk][tap][c] for sub-filter tap t, flipped in T, R and
// S (3D: tap (t', r', s') at (t' R' + r') S' + s').
// Stride 1 (one phase) is the whole filter flipped.
Status launch_phase_filters(const Problem& p, const Geo* phases, const PhaseDepth* depths,
                            int count, const void* w, void* wt, std::size_t elem);

// The operands of the forward GEMM that computes a problem: x, w and y for a forward problem;
// for backward-data (the phases from stride_phases), dy, the flipped (sub-)filters, which it
// first writes into wt (launch_phase_filters), and dx. gpu:tc_implicit_gemm and (stride 1)
// gpu:wgmma_implicit_gemm run their forward kernels on these.
struct Operands {
  const void* x;
  const void* w;
  void* y;
};
Status forward_operands(const Problem& p, const Geo* phases, const PhaseDepth* depths, int count,
                        const ConvTensors& t, void* wt, Operands* out);

}  // namespace convguard::gpu::tc
