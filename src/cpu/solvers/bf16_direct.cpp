#include "cpu/solvers/bf16_direct.hpp"

#include <fmt/format.h>

#include <cstring>

#include "cpu/isa.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

std::int64_t pairs(std::int64_t c) {
  return (c + 1) / 2;
}

// The bf16 bits of an fp32 value that is a bf16 value (the staging's exact conversion).
std::uint32_t bf16_bits(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u >> 16;
}

}  // namespace

Status Bf16DirectSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.dtype != DType::bf16) return not_applicable("bf16 problems only");
  if (p.direction != Direction::forward) return not_applicable("forward only");
  if (p.g != 1) return not_applicable(fmt::format("one group only (g={})", p.g));
  if (auto s = require_isa(Isa::avx512); !s) return s;
  if (!__builtin_cpu_supports("avx512bf16"))
    return not_applicable("needs AVX512_BF16 (vdpbf16ps), which this CPU does not have");
  return Status::ok();
}

StagingSpec Bf16DirectSolver::staging(const Problem& p) const {
  StagingSpec s;
  s.activations = Order::channels_last;
  s.filter = Order::channels_last;  // [K][taps][C]
  s.x_pad = forward_padding(p);
  return s;
}

void Bf16DirectSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  const Sizes5 xs = padded(Sizes5{G.n, G.c(), G.id, G.ih, G.iw}, forward_padding(p));
  // 32-bit pairs, reserved as floats (the same size).
  layout.add(xs.n * xs.d * xs.h * xs.w * pairs(G.c()));
  layout.add((G.k() + 15) / 16 * G.taps() * pairs(G.c()) * 16);
}

Status Bf16DirectSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                                 const WorkspaceLayout& layout, int first_scratch) const {
  (void)p;
  const Geometry& G = t.geo;
  const std::int64_t C = G.c(), C2 = pairs(C), K = G.k(), taps = G.taps();
  auto* xp = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch));
  auto* wp = reinterpret_cast<std::uint32_t*>(layout.get(ws, first_scratch + 1));
  const std::int64_t pixels = t.xs.n * t.xs.d * t.xs.h * t.xs.w;
#pragma omp parallel for schedule(static)
  for (std::int64_t px = 0; px < pixels; ++px) {
    const float* in = t.x + px * C;
    std::uint32_t* out = xp + px * C2;
    for (std::int64_t c2 = 0; c2 < C2; ++c2) {
      const std::uint32_t lo = bf16_bits(in[2 * c2]);
      const std::uint32_t hi = 2 * c2 + 1 < C ? bf16_bits(in[2 * c2 + 1]) : 0;
      out[c2] = lo | hi << 16;
    }
  }
  const std::int64_t kblocks = (K + 15) / 16;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t kb = 0; kb < kblocks; ++kb)
    for (std::int64_t tap = 0; tap < taps; ++tap)
      for (std::int64_t c2 = 0; c2 < C2; ++c2)
        for (std::int64_t lane = 0; lane < 16; ++lane) {
          const std::int64_t k = kb * 16 + lane;
          std::uint32_t v = 0;
          if (k < K) {
            const float* w = t.w + (k * taps + tap) * C;
            v = bf16_bits(w[2 * c2]) | (2 * c2 + 1 < C ? bf16_bits(w[2 * c2 + 1]) << 16 : 0u);
          }
          wp[((kb * taps + tap) * C2 + c2) * 16 + lane] = v;
        }
  bf16::forward_avx512(G, t.xs, xp, wp, t.y);
  return Status::ok();
}

}  // namespace convguard::cpu
