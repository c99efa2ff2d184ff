#include "cpu/solvers/depthwise.hpp"

#include <fmt/format.h>

namespace convguard::cpu {
namespace {

using detail::Geometry;

// Every kernel works on filters transposed to [tap][c] so the channel loop is contiguous.
void forward(const Geometry& G, const StagedTensors& t, const float* wt) {
  const std::int64_t C = G.c();
  const Sizes5& xs = t.xs;
#pragma omp parallel for collapse(3) schedule(static)
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh)
        for (std::int64_t ow = 0; ow < G.ow; ++ow) {
          float* out = t.y + (((n * G.od + od) * G.oh + oh) * G.ow + ow) * C;
          for (std::int64_t c = 0; c < C; ++c) out[c] = 0.f;
          std::int64_t tap = 0;
          for (std::int64_t a = 0; a < G.kd; ++a)
            for (std::int64_t b = 0; b < G.kh; ++b)
              for (std::int64_t e = 0; e < G.kw; ++e, ++tap) {
                const float* in =
                    t.x +
                    (((n * xs.d + od * G.sd + a * G.dd) * xs.h + oh * G.sh + b * G.dh) * xs.w +
                     ow * G.sw + e * G.dw) *
                        C;
                const float* w = wt + tap * C;
                for (std::int64_t c = 0; c < C; ++c) out[c] += in[c] * w[c];
              }
        }
}

void backward_data(const Geometry& G, const StagedTensors& t, const float* wt) {
  const std::int64_t C = G.c();
#pragma omp parallel for collapse(3) schedule(static)
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t id = 0; id < G.id; ++id)
      for (std::int64_t ih = 0; ih < G.ih; ++ih)
        for (std::int64_t iw = 0; iw < G.iw; ++iw) {
          float* out = t.x + (((n * G.id + id) * G.ih + ih) * G.iw + iw) * C;
          for (std::int64_t c = 0; c < C; ++c) out[c] = 0.f;
          std::int64_t tap = 0;
          for (std::int64_t a = 0; a < G.kd; ++a) {
            const std::int64_t td = id + G.pd - a * G.dd;
            const bool vd = td >= 0 && td % G.sd == 0 && td / G.sd < G.od;
            for (std::int64_t b = 0; b < G.kh; ++b) {
              const std::int64_t th = ih + G.ph - b * G.dh;
              const bool vh = vd && th >= 0 && th % G.sh == 0 && th / G.sh < G.oh;
              for (std::int64_t e = 0; e < G.kw; ++e, ++tap) {
                const std::int64_t tw = iw + G.pw - e * G.dw;
                if (!vh || tw < 0 || tw % G.sw || tw / G.sw >= G.ow) continue;
                const float* dy =
                    t.y + (((n * G.od + td / G.sd) * G.oh + th / G.sh) * G.ow + tw / G.sw) * C;
                const float* w = wt + tap * C;
                for (std::int64_t c = 0; c < C; ++c) out[c] += dy[c] * w[c];
              }
            }
          }
        }
}

// dw[c][tap]: each thread owns one (tap, channel chunk) and sums over every output position.
void backward_weights(const Geometry& G, const StagedTensors& t) {
  const std::int64_t C = G.c(), taps = G.taps();
  constexpr std::int64_t kChunk = 64;
  const std::int64_t chunks = (C + kChunk - 1) / kChunk;
  const Sizes5& xs = t.xs;
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
  for (std::int64_t tap = 0; tap < taps; ++tap)
    for (std::int64_t ch = 0; ch < chunks; ++ch) {
      const std::int64_t a = tap / (G.kh * G.kw), b = (tap / G.kw) % G.kh, e = tap % G.kw;
      const std::int64_t c0 = ch * kChunk, cn = std::min(kChunk, C - c0);
      float acc[kChunk] = {};
      for (std::int64_t n = 0; n < G.n; ++n)
        for (std::int64_t od = 0; od < G.od; ++od)
          for (std::int64_t oh = 0; oh < G.oh; ++oh)
            for (std::int64_t ow = 0; ow < G.ow; ++ow) {
              const float* dy = t.y + (((n * G.od + od) * G.oh + oh) * G.ow + ow) * C + c0;
              const float* in =
                  t.x +
                  (((n * xs.d + od * G.sd + a * G.dd) * xs.h + oh * G.sh + b * G.dh) * xs.w +
                   ow * G.sw + e * G.dw) *
                      C +
                  c0;
              for (std::int64_t c = 0; c < cn; ++c) acc[c] += dy[c] * in[c];
            }
      for (std::int64_t c = 0; c < cn; ++c) t.w[(c0 + c) * taps + tap] = acc[c];
    }
}

}  // namespace

Status DepthwiseSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (!p.is_depthwise()) {
    return not_applicable(
        fmt::format("not depthwise: needs g == ic == oc (g={}, ic={}, oc={})", p.g, p.c, p.k));
  }
  return Status::ok();
}

StagingSpec DepthwiseSolver::staging(const Problem& p) const {
  StagingSpec s;
  s.activations = Order::channels_last;
  s.filter = Order::channels_first;  // [C][1][taps] == [C][taps] either way
  if (p.direction != Direction::backward_data) s.x_pad = forward_padding(p);
  return s;
}

void DepthwiseSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  layout.add(p.direction == Direction::backward_weights ? 0 : p.c * p.taps());
}

Status DepthwiseSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                                const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  if (p.direction == Direction::backward_weights) {
    backward_weights(G, t);
    return Status::ok();
  }
  float* wt = layout.get(ws, first_scratch);
  const std::int64_t C = G.c(), taps = G.taps();
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t tap = 0; tap < taps; ++tap) wt[tap * C + c] = t.w[c * taps + tap];
  if (p.direction == Direction::forward)
    forward(G, t, wt);
  else
    backward_data(G, t, wt);
  return Status::ok();
}

}  // namespace convguard::cpu
