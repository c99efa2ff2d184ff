#include "cpu/solvers/bf16_direct.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/tensor_iter.hpp"
#include "cpu/isa.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"

namespace convguard::cpu {
namespace {

using bf16::blocks16;
using bf16::padded16;
using bf16::pairs;
using detail::Geometry;

// The kernel's dW^T [taps * C][Kp] into the caller's filter, rounded to bf16: per tap a [C][K]
// matrix (rows Kp apart) stored at the filter's K and C strides, 64 input channels at a time.
void write_filter(const float* dwt, const Geometry& G, const TensorView& w) {
  const std::int64_t K = G.k(), C = G.c(), kp = padded16(K);
  const auto& st = detail::shape5(w.desc).strides;
  auto* dst = static_cast<std::uint16_t*>(w.data);
  constexpr std::int64_t kRows = 64;
  const std::int64_t chunks = (C + kRows - 1) / kRows;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t tap = 0; tap < G.taps(); ++tap)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::int64_t a = tap / (G.kh * G.kw), b = tap / G.kw % G.kh, e = tap % G.kw;
      const std::int64_t c0 = chunk * kRows;
      bf16::store_bf16_avx512(dwt + (tap * C + c0) * kp, kp, std::min(kRows, C - c0), K,
                              dst + c0 * st[1] + a * st[2] + b * st[3] + e * st[4], st[0], st[1]);
    }
}

}  // namespace

Status Bf16DirectSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  // The ISA first: a run that may not use it (CONVGUARD_CPU_ISA) or a CPU without it declines
  // every problem for that reason, which the property test recognises.
  if (kernel_ == bf16::Kernel::amx_bf16) {
    // The ISA's cap and CPUID first (the property test recognises a CPU's decline), the problem
    // next, Linux's tile state last: asking for it enlarges the process's signal frames, which
    // merely listing solvers for an f32 problem should not do.
    if (auto s = require_amx_bf16_cpu(); !s) return s;
  } else {
    if (auto s = require_isa(Isa::avx512); !s) return s;
    if (!__builtin_cpu_supports("avx512bf16"))
      return not_applicable("needs AVX512_BF16 (vdpbf16ps), which this CPU does not have");
  }
  if (p.dtype != DType::bf16) return not_applicable("bf16 problems only");
  if (p.direction == Direction::backward_data) {
    for (int d = 0; d < 3; ++d) {
      if (p.dilation[d] != 1) return not_applicable("backward-data with dilation 1 only");
    }
  }
  if (p.g != 1) return not_applicable(fmt::format("one group only (g={})", p.g));
  if (kernel_ == bf16::Kernel::amx_bf16)
    if (auto s = request_amx_tile_state(); !s) return s;
  return Status::ok();
}

StagingSpec Bf16DirectSolver::staging(const Problem& p) const {
  StagingSpec s;
  s.activations = Order::channels_last;
  s.filter = Order::channels_last;  // [K][taps][C]
  // The caller's bf16 tensors are read and written directly (bf16_pack.hpp); x_pad sizes xs.
  s.stage = false;
  s.x_pad = forward_padding(p);
  return s;
}

void Bf16DirectSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  // 32-bit pairs, reserved as floats (the same size).
  if (p.direction == Direction::backward_weights) {
    // x as (pixel, pixel + stride) pairs, dy as pairs of adjacent output pixels, and dW^T [Q][Kp].
    const Sizes5 xs = padded(Sizes5{G.n, G.c(), G.id, G.ih, G.iw}, forward_padding(p));
    // On AMX: x's copies and dy's pairs on its virtual grid and a dW^T per split, with room
    // for the AVX512_BF16 kernel's buffers too (its fallback when x holds Inf or NaN).
    const std::int64_t kp = padded16(G.k());
    std::int64_t x_words = xs.elements(), dy_words = G.n * G.od * G.oh * pairs(G.ow) * kp;
    std::int64_t dwt_floats = G.taps() * G.c() * kp;
    if (kernel_ == bf16::Kernel::amx_bf16) {
      const bf16::AmxBwdwLayout L = bf16::amx_backward_weights_layout(G);
      x_words = std::max(x_words, pairs(L.x_elements));
      dy_words = std::max(dy_words, L.dy_words);
      dwt_floats = std::max(dwt_floats, L.splits * L.dwt_floats);
    }
    layout.add(x_words);
    layout.add(dy_words);
    layout.add(dwt_floats);
    return;
  }
  if (p.direction == Direction::backward_data) {
    // dy as padded channel pairs, and room for the whole filter (each phase packs a part).
    const Sizes5 dy = bf16::backward_data_dy_sizes(p);
    layout.add(dy.n * dy.d * dy.h * dy.w * pairs(G.k()) + bf16::x_slack_words(1, G.k(), kernel_));
    layout.add(bf16::backward_data_filter_words(p, kernel_));
    return;
  }
  // x as padded channel pairs, and the packed filter.
  const Sizes5 in = padded(Sizes5{G.n, G.c(), G.id, G.ih, G.iw}, forward_padding(p));
  layout.add(in.n * in.d * in.h * in.w * pairs(G.c()) + bf16::x_slack_words(G.sw, G.c(), kernel_));
  layout.add(bf16::packed_filter_words(G, kernel_));
}

Status Bf16DirectSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                                 const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  const ConvTensors& caller = *t.caller;
  auto* in = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch));
  auto* second = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch + 1));
  switch (p.direction) {
    case Direction::forward:
      bf16::pack_channel_pairs(bf16::Reader(caller.x), forward_padding(p), in);
      bf16::pack_filter(bf16::Reader(caller.w), G,
                        bf16::SubFilter{false, {G.kd, G.kh, G.kw}, {0, 0, 0}, {1, 1, 1}}, second,
                        bf16::filter_rows(G, kernel_));
      bf16::forward(G, t.xs, in, second, bf16::Writer(caller.y), kernel_);
      return Status::ok();
    case Direction::backward_data:
      bf16::backward_data(p, caller, in, second, kernel_);
      return Status::ok();
    case Direction::backward_weights: {
      float* dwt = layout.get(ws, first_scratch + 2);
      if (kernel_ == bf16::Kernel::amx_bf16 &&
          bf16::backward_weights_on_amx(G, caller, reinterpret_cast<std::uint16_t*>(in), second,
                                        dwt)) {
        write_filter(dwt, G, caller.w);
        return Status::ok();
      }
      bf16::pack_shifted_pairs(bf16::Reader(caller.x), forward_padding(p), G.sw, in);
      bf16::pack_pixel_pairs(bf16::Reader(caller.y), padded16(G.k()), second);
      bf16::backward_weights(G, t.xs, in, second, dwt);
      write_filter(dwt, G, caller.w);
      return Status::ok();
    }
  }
  return {StatusCode::internal_error, "cpu:bf16_direct: unknown direction"};
}

}  // namespace convguard::cpu
