#include "cpu/solvers/im2col_gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "cpu/blas.hpp"

namespace convguard::cpu {
namespace {

using detail::Geometry;

bool is_pointwise(const Geometry& G) {
  return G.taps() == 1 && G.sd == 1 && G.sh == 1 && G.sw == 1 && G.pd == 0 && G.ph == 0 &&
         G.pw == 0 && G.od == G.id && G.oh == G.ih && G.ow == G.iw;  // no end padding either
}

// Output columns whose input position ow*s - p + e*dil lies in [0, size).
void valid_range(std::int64_t out, std::int64_t s, std::int64_t off, std::int64_t size,
                 std::int64_t& lo, std::int64_t& hi) {
  // Both within [0, out]: with a negative end padding (benchdnn's derived one) the first valid
  // column can lie past the last output, and the zero fill before it once wrote past the row
  // (ASan, NegativeEndPadding.EverySolverDeclinesOrVerifies).
  lo = std::min(out, off >= 0 ? 0 : (-off + s - 1) / s);
  hi = size - off <= 0 ? 0 : std::min(out, (size - off + s - 1) / s);
  if (hi < lo) hi = lo;
}

// col[(c, tap)][o] = x[c][o * s - p + tap * dil] (0 outside). x points at channel 0 of the group.
void im2col(const Geometry& G, const float* x, float* col) {
  const std::int64_t taps = G.taps(), os = G.out_spatial(), plane = G.in_spatial();
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < G.cg * taps; ++r) {
    const std::int64_t c = r / taps, t = r % taps;
    const std::int64_t a = t / (G.kh * G.kw), b = (t / G.kw) % G.kh, e = t % G.kw;
    float* dst = col + r * os;
    const float* xc = x + c * plane;
    std::int64_t lo, hi;
    valid_range(G.ow, G.sw, e * G.dw - G.pw, G.iw, lo, hi);
    for (std::int64_t od = 0; od < G.od; ++od) {
      const std::int64_t id = od * G.sd - G.pd + a * G.dd;
      for (std::int64_t oh = 0; oh < G.oh; ++oh) {
        const std::int64_t ih = oh * G.sh - G.ph + b * G.dh;
        float* row = dst + (od * G.oh + oh) * G.ow;
        if (id < 0 || id >= G.id || ih < 0 || ih >= G.ih) {
          std::memset(row, 0, static_cast<std::size_t>(G.ow) * sizeof(float));
          continue;
        }
        const float* src = xc + (id * G.ih + ih) * G.iw + e * G.dw - G.pw;
        for (std::int64_t ow = 0; ow < lo; ++ow) row[ow] = 0.f;
        for (std::int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow * G.sw];
        for (std::int64_t ow = hi; ow < G.ow; ++ow) row[ow] = 0.f;
      }
    }
  }
}

// dx[c] = sum over taps of col rows scattered back; each thread owns whole channels.
void col2im(const Geometry& G, const float* col, float* dx) {
  const std::int64_t taps = G.taps(), os = G.out_spatial(), plane = G.in_spatial();
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < G.cg; ++c) {
    float* xc = dx + c * plane;
    std::memset(xc, 0, static_cast<std::size_t>(plane) * sizeof(float));
    for (std::int64_t t = 0; t < taps; ++t) {
      const std::int64_t a = t / (G.kh * G.kw), b = (t / G.kw) % G.kh, e = t % G.kw;
      const float* src = col + (c * taps + t) * os;
      std::int64_t lo, hi;
      valid_range(G.ow, G.sw, e * G.dw - G.pw, G.iw, lo, hi);
      for (std::int64_t od = 0; od < G.od; ++od) {
        const std::int64_t id = od * G.sd - G.pd + a * G.dd;
        if (id < 0 || id >= G.id) continue;
        for (std::int64_t oh = 0; oh < G.oh; ++oh) {
          const std::int64_t ih = oh * G.sh - G.ph + b * G.dh;
          if (ih < 0 || ih >= G.ih) continue;
          float* dst = xc + (id * G.ih + ih) * G.iw + e * G.dw - G.pw;
          const float* row = src + (od * G.oh + oh) * G.ow;
          for (std::int64_t ow = lo; ow < hi; ++ow) dst[ow * G.sw] += row[ow];
        }
      }
    }
  }
}

// Column buffers used at once: one per thread when there are enough (image, group) pairs to keep
// every thread busy with single-threaded GEMMs (small per-image GEMMs scale poorly inside BLAS),
// else one shared buffer and BLAS's own threads.
std::int64_t column_buffers(const Geometry& G) {
  const std::int64_t threads = omp_get_max_threads();
  return threads > 1 && G.n * G.g >= threads ? threads : 1;
}

// One (image, group) pair through the GEMMs of its direction.
void image_group(Direction dir, const Geometry& G, const StagedTensors& t, std::int64_t n,
                 std::int64_t g, float* col, bool pointwise) {
  const std::int64_t os = G.out_spatial(), ck = G.cg * G.taps(), plane = G.in_spatial();
  float* xg = t.x + (n * G.c() + g * G.cg) * plane;
  float* yg = t.y + (n * G.k() + g * G.kg) * os;
  float* wg = t.w + g * G.kg * ck;
  switch (dir) {
    case Direction::forward: {
      if (!pointwise) im2col(G, xg, col);
      blas::sgemm(false, false, G.kg, os, ck, 1.f, wg, ck, pointwise ? xg : col, os, 0.f, yg, os);
      break;
    }
    case Direction::backward_data:
      blas::sgemm(true, false, ck, os, G.kg, 1.f, wg, ck, yg, os, 0.f, col, os);
      col2im(G, col, xg);
      break;
    case Direction::backward_weights:
      break;  // accumulates across images: see compute()
  }
}

}  // namespace

Status Im2colGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (!blas::available()) return not_applicable(blas::describe());
  const Geometry G = detail::geometry(p);
  constexpr std::int64_t kIntMax = 0x7fffffff;
  if (G.cg * G.taps() > kIntMax || G.out_spatial() > kIntMax || G.kg > kIntMax ||
      G.n * G.out_spatial() > kIntMax) {
    return not_applicable("a GEMM dimension exceeds the 32-bit BLAS interface");
  }
  return Status::ok();
}

StagingSpec Im2colGemmSolver::staging(const Problem&) const {
  return StagingSpec{Order::channels_first, Order::channels_first, Padding{}, false};
}

void Im2colGemmSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Geometry G = detail::geometry(p);
  const bool skip = is_pointwise(G) && p.direction != Direction::backward_data;
  const std::int64_t buffers = p.direction == Direction::backward_weights ? 1 : column_buffers(G);
  layout.add(skip ? 0 : buffers * G.cg * G.taps() * G.out_spatial());
}

Status Im2colGemmSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                                 const WorkspaceLayout& layout, int first_scratch) const {
  const Geometry& G = t.geo;
  float* col = layout.get(ws, first_scratch);
  const bool pointwise = is_pointwise(G);
  const std::int64_t os = G.out_spatial(), ck = G.cg * G.taps(), plane = G.in_spatial();
  if (p.direction == Direction::backward_weights) {
    // dW accumulates over images: one image at a time, BLAS threads inside.
    for (std::int64_t n = 0; n < G.n; ++n)
      for (std::int64_t g = 0; g < G.g; ++g) {
        float* xg = t.x + (n * G.c() + g * G.cg) * plane;
        if (!pointwise) im2col(G, xg, col);
        blas::sgemm(false, true, G.kg, ck, os, 1.f, t.y + (n * G.k() + g * G.kg) * os, os,
                    pointwise ? xg : col, os, n == 0 ? 0.f : 1.f, t.w + g * G.kg * ck, ck);
      }
    return Status::ok();
  }
  const std::int64_t buffers = column_buffers(G), pairs = G.n * G.g;
  if (buffers == 1) {
    for (std::int64_t i = 0; i < pairs; ++i)
      image_group(p.direction, G, t, i / G.g, i % G.g, col, pointwise);
    return Status::ok();
  }
#pragma omp parallel for num_threads(static_cast <int>(buffers)) schedule(dynamic, 1)
  for (std::int64_t i = 0; i < pairs; ++i) {
    image_group(p.direction, G, t, i / G.g, i % G.g, col + omp_get_thread_num() * ck * os,
                pointwise);
  }
  return Status::ok();
}

}  // namespace convguard::cpu
