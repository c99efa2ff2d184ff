#include "cpu/solvers/bf16_direct.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cpu/isa.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

std::int64_t pairs(std::int64_t c) {
  return (c + 1) / 2;
}

// The bf16 bits of an fp32 value that is a bf16 value (the staging's exact conversion), widened
// for a pair.
std::uint32_t bf16_bits(float v) {
  return float_to_bfloat(v);
}

// Channels-last fp32 activations [N][D][H][W][C] as pairs of adjacent channels, into a buffer
// padded by `pad` (zero-filled), the layout the kernel reads.
void pack_pairs(const float* src, const Sizes5& s, const Padding& pad, std::uint32_t* dst) {
  const std::int64_t C = s.c, C2 = pairs(C);
  const Sizes5 ps = padded(s, pad);
  // Only the padding needs zeros: without it every element is written below.
  if (ps.elements() != s.elements()) std::fill(dst, dst + ps.n * ps.d * ps.h * ps.w * C2, 0u);
#pragma omp parallel for collapse(3) schedule(static)
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t d = 0; d < s.d; ++d)
      for (std::int64_t h = 0; h < s.h; ++h)
        for (std::int64_t w = 0; w < s.w; ++w) {
          const float* in = src + (((n * s.d + d) * s.h + h) * s.w + w) * C;
          std::uint32_t* out =
              dst + (((n * ps.d + d + pad.begin[0]) * ps.h + h + pad.begin[1]) * ps.w + w +
                     pad.begin[2]) *
                        C2;
          for (std::int64_t c2 = 0; c2 < C2; ++c2)
            out[c2] =
                bf16_bits(in[2 * c2]) | (2 * c2 + 1 < C ? bf16_bits(in[2 * c2 + 1]) << 16 : 0u);
        }
}

// The filter [K][taps][C] as the kernel's [ceil(O/16)][taps][ceil(I/2)][16] pairs, where O are the
// kernel's output channels and I its input channels: forward O = K, I = C; backward-data (the
// forward convolution of dy with the filter flipped in every spatial dimension) O = C, I = K.
void pack_filter(const float* w, const Geometry& G, bool backward_data, std::uint32_t* dst) {
  const std::int64_t K = G.k(), C = G.c(), taps = G.taps();
  const std::int64_t O = backward_data ? C : K, I = backward_data ? K : C, I2 = pairs(I);
  const auto at = [&](std::int64_t o, std::int64_t tap, std::int64_t i) -> std::uint32_t {
    if (o >= O || i >= I) return 0;
    // The flipped tap of (a, b, e) is (kd-1-a, kh-1-b, kw-1-e): index taps-1-tap.
    return backward_data ? bf16_bits(w[(i * taps + (taps - 1 - tap)) * C + o])
                         : bf16_bits(w[(o * taps + tap) * C + i]);
  };
  const std::int64_t blocks = (O + 15) / 16;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t ob = 0; ob < blocks; ++ob)
    for (std::int64_t tap = 0; tap < taps; ++tap)
      for (std::int64_t i2 = 0; i2 < I2; ++i2)
        for (std::int64_t lane = 0; lane < 16; ++lane) {
          const std::int64_t o = ob * 16 + lane;
          dst[((ob * taps + tap) * I2 + i2) * 16 + lane] =
              at(o, tap, 2 * i2) | at(o, tap, 2 * i2 + 1) << 16;
        }
}

// Backward-data with stride 1 and dilation 1 as a forward convolution over dy: the same filter
// size, begin padding k-1-pad_begin and end padding k-1-pad_end, output the size of x. pad_end is
// the true one, negative where the forward pass leaves x's last rows unread (forward_padding
// clamps it at 0): those rows of dx then come out zero from the wider end padding.
Padding backward_data_padding(const Problem& p) {
  Padding pad;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t end = p.output(d) - 1 + p.filter[d] - p.input[d] - p.pad_begin[d];
    pad.begin[d] = p.filter[d] - 1 - p.pad_begin[d];
    pad.end[d] = p.filter[d] - 1 - end;
  }
  return pad;
}

Geometry as_forward(const Geometry& G, const Padding& pad) {
  Geometry F = G;
  F.cg = G.kg, F.kg = G.cg;
  F.id = G.od, F.ih = G.oh, F.iw = G.ow;
  F.od = G.id, F.oh = G.ih, F.ow = G.iw;
  F.sd = F.sh = F.sw = F.dd = F.dh = F.dw = 1;
  F.pd = pad.begin[0], F.ph = pad.begin[1], F.pw = pad.begin[2];
  return F;
}

}  // namespace

Status Bf16DirectSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  // The ISA first: a run that may not use it (CONVGUARD_CPU_ISA) or a CPU without it declines
  // every problem for that reason, which the property test recognises.
  if (auto s = require_isa(Isa::avx512); !s) return s;
  if (!__builtin_cpu_supports("avx512bf16"))
    return not_applicable("needs AVX512_BF16 (vdpbf16ps), which this CPU does not have");
  if (p.dtype != DType::bf16) return not_applicable("bf16 problems only");
  if (p.direction == Direction::backward_weights) return not_applicable("no backward-weights");
  if (p.direction == Direction::backward_data) {
    for (int d = 0; d < 3; ++d) {
      if (p.stride[d] != 1 || p.dilation[d] != 1)
        return not_applicable("backward-data with stride 1 and dilation 1 only");
    }
    const Padding pad = backward_data_padding(p);
    for (int d = 0; d < 3; ++d) {
      if (pad.begin[d] < 0 || pad.end[d] < 0)
        return not_applicable("backward-data with padding up to the filter size - 1 only");
    }
  }
  if (p.g != 1) return not_applicable(fmt::format("one group only (g={})", p.g));
  return Status::ok();
}

StagingSpec Bf16DirectSolver::staging(const Problem& p) const {
  StagingSpec s;
  s.activations = Order::channels_last;
  s.filter = Order::channels_last;  // [K][taps][C]
  if (p.direction == Direction::forward) s.x_pad = forward_padding(p);
  return s;
}

void Bf16DirectSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  const bool bwd = p.direction == Direction::backward_data;
  // The kernel's input (x, or dy for backward-data) as padded pairs, and the packed filter:
  // 32-bit pairs, reserved as floats (the same size).
  const Sizes5 in = bwd ? padded(Sizes5{G.n, G.k(), G.od, G.oh, G.ow}, backward_data_padding(p))
                        : padded(Sizes5{G.n, G.c(), G.id, G.ih, G.iw}, forward_padding(p));
  const std::int64_t O = bwd ? G.c() : G.k(), I = bwd ? G.k() : G.c();
  layout.add(in.n * in.d * in.h * in.w * pairs(I));
  layout.add((O + 15) / 16 * G.taps() * pairs(I) * 16);
}

Status Bf16DirectSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                                 const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  auto* in = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch));
  auto* filter = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch + 1));
  if (p.direction == Direction::forward) {
    // x is staged with its padding already: pairs without more.
    pack_pairs(t.x, t.xs, Padding{}, in);
    pack_filter(t.w, G, false, filter);
    bf16::forward_avx512(G, t.xs, in, filter, t.y);
    return Status::ok();
  }
  const Padding pad = backward_data_padding(p);
  pack_pairs(t.y, t.ys, pad, in);
  pack_filter(t.w, G, true, filter);
  bf16::forward_avx512(as_forward(G, pad), padded(t.ys, pad), in, filter, t.x);
  return Status::ok();
}

}  // namespace convguard::cpu
