#include "core/reference_rows.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace convguard::detail {
namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// The output positions o in [lo, hi) whose input position o * stride + off lies in [0, in),
// for one filter tap (off = tap * dilation - pad).
struct Span {
  std::int64_t lo, hi, off;
};

Span span(std::int64_t out, std::int64_t in, std::int64_t stride, std::int64_t off) {
  const std::int64_t lo = std::max<std::int64_t>(0, -floor_div(off, stride));
  const std::int64_t hi = std::min(out, floor_div(in - 1 - off, stride) + 1);
  return {lo, std::max(lo, hi), off};
}

std::vector<Span> width_spans(const Geometry& G) {
  std::vector<Span> s;
  for (std::int64_t e = 0; e < G.kw; ++e) s.push_back(span(G.ow, G.iw, G.sw, e * G.dw - G.pw));
  return s;
}

// Calls f(a, b, id, ih) for each filter tap (a, b) whose input row (depth id, height ih) of
// output row (od, oh) lies inside the input (not in the padding).
template <class F>
void for_each_input_row(const Geometry& G, std::int64_t od, std::int64_t oh, F&& f) {
  for (std::int64_t a = 0; a < G.kd; ++a) {
    const std::int64_t id = od * G.sd - G.pd + a * G.dd;
    if (id < 0 || id >= G.id) continue;
    for (std::int64_t b = 0; b < G.kh; ++b) {
      const std::int64_t ih = oh * G.sh - G.ph + b * G.dh;
      if (ih >= 0 && ih < G.ih) f(a, b, id, ih);
    }
  }
}

void forward(const Geometry& G, const double* x, const double* w, double* y) {
  const std::int64_t C = G.c(), K = G.k();
  const std::vector<Span> spans = width_spans(G);
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int64_t g = k / G.kg;
      for (std::int64_t od = 0; od < G.od; ++od)
        for (std::int64_t oh = 0; oh < G.oh; ++oh) {
          double* yr = y + (((n * K + k) * G.od + od) * G.oh + oh) * G.ow;
          std::fill(yr, yr + G.ow, 0.0);
          for (std::int64_t c = 0; c < G.cg; ++c) {
            const double* xc = x + (n * C + g * G.cg + c) * G.in_spatial();
            const double* wc = w + (k * G.cg + c) * G.taps();
            for_each_input_row(G, od, oh, [&](auto a, auto b, auto id, auto ih) {
              const double* xr = xc + (id * G.ih + ih) * G.iw;
              const double* wr = wc + (a * G.kh + b) * G.kw;
              for (std::int64_t e = 0; e < G.kw; ++e) {
                const Span s = spans[static_cast<std::size_t>(e)];
                const double wv = wr[e];
                for (std::int64_t o = s.lo; o < s.hi; ++o) yr[o] += wv * xr[o * G.sw + s.off];
              }
            });
          }
        }
    }
}

void backward_data(const Geometry& G, const double* dy, const double* w, double* dx) {
  const std::int64_t C = G.c(), K = G.k();
  const std::vector<Span> spans = width_spans(G);
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t c = 0; c < C; ++c) {
      const std::int64_t g = c / G.cg, cl = c % G.cg;
      double* plane = dx + (n * C + c) * G.in_spatial();
      std::fill(plane, plane + G.in_spatial(), 0.0);
      for (std::int64_t kl = 0; kl < G.kg; ++kl) {
        const std::int64_t k = g * G.kg + kl;
        const double* wk = w + (k * G.cg + cl) * G.taps();
        for (std::int64_t od = 0; od < G.od; ++od)
          for (std::int64_t oh = 0; oh < G.oh; ++oh) {
            const double* yr = dy + (((n * K + k) * G.od + od) * G.oh + oh) * G.ow;
            for_each_input_row(G, od, oh, [&](auto a, auto b, auto id, auto ih) {
              double* xr = plane + (id * G.ih + ih) * G.iw;
              const double* wr = wk + (a * G.kh + b) * G.kw;
              for (std::int64_t e = 0; e < G.kw; ++e) {
                const Span s = spans[static_cast<std::size_t>(e)];
                const double wv = wr[e];
                for (std::int64_t o = s.lo; o < s.hi; ++o) xr[o * G.sw + s.off] += wv * yr[o];
              }
            });
          }
      }
    }
}

void backward_weights(const Geometry& G, const double* x, const double* dy, double* dw) {
  const std::int64_t C = G.c(), K = G.k(), taps = G.taps();
  const std::vector<Span> spans = width_spans(G);
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t cl = 0; cl < G.cg; ++cl) {
      const std::int64_t c = (k / G.kg) * G.cg + cl;
      // One accumulator per tap, so x and dy are each read once per (k, c).
      std::vector<double> acc(static_cast<std::size_t>(taps), 0.0);
      for (std::int64_t n = 0; n < G.n; ++n)
        for (std::int64_t od = 0; od < G.od; ++od)
          for (std::int64_t oh = 0; oh < G.oh; ++oh) {
            const double* yr = dy + (((n * K + k) * G.od + od) * G.oh + oh) * G.ow;
            const double* xc = x + (n * C + c) * G.in_spatial();
            for_each_input_row(G, od, oh, [&](auto a, auto b, auto id, auto ih) {
              const double* xr = xc + (id * G.ih + ih) * G.iw;
              for (std::int64_t e = 0; e < G.kw; ++e) {
                const Span s = spans[static_cast<std::size_t>(e)];
                double sum = 0;
#pragma omp simd reduction(+ : sum)
                for (std::int64_t o = s.lo; o < s.hi; ++o) sum += xr[o * G.sw + s.off] * yr[o];
                acc[static_cast<std::size_t>((a * G.kh + b) * G.kw + e)] += sum;
              }
            });
          }
      std::copy(acc.begin(), acc.end(), dw + (k * G.cg + cl) * taps);
    }
}

}  // namespace

void reference_rows(Direction dir, const Geometry& G, const std::vector<double>& a,
                    const std::vector<double>& b, std::vector<double>& out) {
  switch (dir) {
    case Direction::forward:
      forward(G, a.data(), b.data(), out.data());
      return;
    case Direction::backward_data:
      backward_data(G, a.data(), b.data(), out.data());
      return;
    case Direction::backward_weights:
      backward_weights(G, a.data(), b.data(), out.data());
      return;
  }
}

}  // namespace convguard::detail
