#include "cpu/solvers/fft.hpp"

#include <fmt/format.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

namespace convguard::cpu {
namespace {

using detail::Geometry;
using cf = std::complex<float>;
constexpr std::int64_t kMaxPlane = 1 << 22;  // transform points per plane we accept
// Butterflies one run may take (~1 s with this unoptimised FFT here): beyond this the solver
// declines, saying so, rather than run for minutes.
constexpr double kMaxButterflies = 1e8;

std::int64_t next_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Sizes of the transform: the padded input plane rounded up to powers of two.
struct Plane {
  std::int64_t hp, wp;  // padded input
  std::int64_t P, Q;    // transform
};
Plane plane_of(const Problem& p) {
  const Padding fp = forward_padding(p);
  Plane pl;
  pl.hp = p.input[1] + fp.begin[1] + fp.end[1];
  pl.wp = p.input[2] + fp.begin[2] + fp.end[2];
  pl.P = next_pow2(pl.hp);
  pl.Q = next_pow2(pl.wp);
  return pl;
}

// exp(-2 pi i k / n) for k < n/2, computed in double once per transform size.
std::vector<cf> twiddles(std::int64_t n) {
  std::vector<cf> t(static_cast<std::size_t>(std::max<std::int64_t>(1, n / 2)));
  for (std::int64_t k = 0; k < n / 2; ++k) {
    const double ang = -2.0 * M_PI * static_cast<double>(k) / static_cast<double>(n);
    t[static_cast<std::size_t>(k)] =
        cf(static_cast<float>(std::cos(ang)), static_cast<float>(std::sin(ang)));
  }
  return t;
}

// In-place iterative radix-2 FFT of n points with stride; inverse conjugates the twiddles
// (unscaled).
void fft1d(cf* a, std::int64_t n, std::int64_t stride, const std::vector<cf>& tw, bool inverse) {
  for (std::int64_t i = 1, j = 0; i < n; ++i) {
    std::int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i * stride], a[j * stride]);
  }
  for (std::int64_t len = 2; len <= n; len <<= 1) {
    const std::int64_t step = n / len;
    for (std::int64_t i = 0; i < n; i += len)
      for (std::int64_t k = 0; k < len / 2; ++k) {
        const cf t0 = tw[static_cast<std::size_t>(k * step)];
        const cf w = inverse ? std::conj(t0) : t0;
        cf& u = a[(i + k) * stride];
        cf& v = a[(i + k + len / 2) * stride];
        const cf t = v * w;
        v = u - t;
        u = u + t;
      }
  }
}

struct Twiddles {
  std::vector<cf> rows, cols;  // for Q-point rows and P-point columns
};

void fft2d(cf* a, std::int64_t P, std::int64_t Q, const Twiddles& tw, bool inverse) {
  for (std::int64_t r = 0; r < P; ++r) fft1d(a + r * Q, Q, 1, tw.rows, inverse);
  for (std::int64_t c = 0; c < Q; ++c) fft1d(a + c, P, Q, tw.cols, inverse);
}

}  // namespace

Status FftSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.spatial_dims == 3)
    return not_applicable("1D and 2D only (3D FFT convolution is not implemented)");
  if (p.direction != Direction::forward)
    return not_applicable("forward only (backward FFT convolution is not implemented)");
  // The transform spans the whole input plane; rows no window reads (negative end padding)
  // would only add their rounding error to every output, beyond the FFT's tolerance.
  for (int d = 1; d < 3; ++d) {
    if (p.pad_end[d] < 0)
      return not_applicable(fmt::format(
          "negative end padding ({} {}): the transform would span input no window reads",
          d == 1 ? "height" : "width", p.pad_end[d]));
  }
  const Plane pl = plane_of(p);
  if (pl.P * pl.Q > kMaxPlane) return not_applicable("input plane too large for the FFT buffers");
  // One transform per filter (K x C/G), input plane (N x C) and output plane (N x K).
  const double planes = static_cast<double>(p.k * p.c_per_group() + p.n * p.c + p.n * p.k);
  const double pq = static_cast<double>(pl.P * pl.Q);
  const double butterflies = planes * pq / 2 * std::log2(pq);
  if (butterflies > kMaxButterflies) {
    return not_applicable(
        fmt::format("{:.2g} FFT butterflies ({}x{} transforms of {} planes) exceed this "
                    "unoptimised FFT's limit of {:.2g}",
                    butterflies, pl.P, pl.Q, planes, kMaxButterflies));
  }
  return Status::ok();
}

Accuracy FftSolver::accuracy(const Problem& p) const {
  const Plane pl = plane_of(p);
  // FFT rounding error grows like log2 of the transform size.
  Accuracy a{false, 0.25 * std::log2(static_cast<double>(pl.P * pl.Q))};
  a.local_errors = false;  // every output of a transform carries all of its rounding error
  return a;
}

StagingSpec FftSolver::staging(const Problem& p) const {
  return StagingSpec{Order::channels_first, Order::channels_first, forward_padding(p), false};
}

void FftSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const Plane pl = plane_of(p);
  const Geometry G = detail::geometry(p);
  layout.add(2 * G.n * G.cg * pl.P * pl.Q);  // X: every image's input planes of one group
  layout.add(2 * G.cg * pl.P * pl.Q);        // W: one output channel's filters
  layout.add(2 * pl.P * pl.Q);               // Y
}

Status FftSolver::compute(const Problem&, const StagedTensors& t, std::span<std::byte> ws,
                          const WorkspaceLayout& layout, int first) const {
  const Geometry& G = t.geo;
  const std::int64_t P = next_pow2(t.xs.h), Q = next_pow2(t.xs.w), PQ = P * Q;
  cf* X = reinterpret_cast<cf*>(layout.get(ws, first));
  cf* W = reinterpret_cast<cf*>(layout.get(ws, first + 1));
  cf* Y = reinterpret_cast<cf*>(layout.get(ws, first + 2));
  const std::int64_t xplane = t.xs.h * t.xs.w, taps = G.taps();
  const float scale = 1.0f / static_cast<float>(PQ);
  const Twiddles tw{twiddles(Q), twiddles(P)};
  for (std::int64_t g = 0; g < G.g; ++g) {
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (std::int64_t n = 0; n < G.n; ++n)
      for (std::int64_t c = 0; c < G.cg; ++c) {
        cf* dst = X + (n * G.cg + c) * PQ;
        std::fill(dst, dst + PQ, cf{});
        const float* src = t.x + (n * G.c() + g * G.cg + c) * xplane;
        for (std::int64_t y = 0; y < t.xs.h; ++y)
          for (std::int64_t x = 0; x < t.xs.w; ++x) dst[y * Q + x] = src[y * t.xs.w + x];
        fft2d(dst, P, Q, tw, false);
      }
    for (std::int64_t kl = 0; kl < G.kg; ++kl) {
      const std::int64_t k = g * G.kg + kl;
#pragma omp parallel for schedule(dynamic, 1)
      for (std::int64_t c = 0; c < G.cg; ++c) {
        cf* dst = W + c * PQ;
        std::fill(dst, dst + PQ, cf{});
        const float* f = t.w + (k * G.cg + c) * taps;
        for (std::int64_t b = 0; b < G.kh; ++b)
          for (std::int64_t e = 0; e < G.kw; ++e) dst[b * G.dh * Q + e * G.dw] = f[b * G.kw + e];
        fft2d(dst, P, Q, tw, false);
      }
      for (std::int64_t n = 0; n < G.n; ++n) {
        const cf* Xn = X + n * G.cg * PQ;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < PQ; ++i) {
          cf s{};
          for (std::int64_t c = 0; c < G.cg; ++c) s += Xn[c * PQ + i] * std::conj(W[c * PQ + i]);
          Y[i] = s;
        }
        fft2d(Y, P, Q, tw, true);
        float* out = t.y + (n * G.k() + k) * G.oh * G.ow;
        for (std::int64_t oh = 0; oh < G.oh; ++oh)
          for (std::int64_t ow = 0; ow < G.ow; ++ow)
            out[oh * G.ow + ow] = Y[oh * G.sh * Q + ow * G.sw].real() * scale;
      }
    }
  }
  return Status::ok();
}

}  // namespace convguard::cpu
