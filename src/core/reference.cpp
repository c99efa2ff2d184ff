#include "convguard/reference.hpp"

#include <cmath>
#include <cstring>

#include "core/geometry.hpp"
#include "core/reference_rows.hpp"
#include "core/tensor_iter.hpp"

namespace convguard {

using detail::Geometry;

float round_to_tf32(float v) {
  if (!std::isfinite(v)) return v;
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1fffu;  // 23 - 10 = 13 bits dropped; adding half rounds ties away
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

namespace {
double map_operand(double v, Operands o) {
  switch (o) {
    case Operands::stored:
      return v;
    case Operands::magnitude:
      return std::fabs(v);
    case Operands::tf32_rounded:
      return round_to_tf32(static_cast<float>(v));
  }
  return v;
}
}  // namespace

std::vector<double> to_dense_f64(const TensorView& t) {
  std::vector<double> out(static_cast<std::size_t>(t.desc.elements()));
  const DType dt = t.desc.dtype;
  detail::for_each_element(t.desc, [&](std::int64_t lin, std::int64_t off) {
    out[static_cast<std::size_t>(lin)] = load_as_float(t.data, off, dt);
  });
  return out;
}

namespace {

// Accessor by logical 5D coordinates (2D tensors have depth 1).
struct ViewAccess {
  const void* data;
  DType dt;
  detail::Shape5 s;  // strides padded to 5 dims
  Operands operands;
  double operator()(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t h,
                    std::int64_t w) const {
    const auto& st = s.strides;
    return map_operand(
        load_as_float(data, a * st[0] + b * st[1] + c * st[2] + h * st[3] + w * st[4], dt),
        operands);
  }
};

ViewAccess view_access(const TensorView& t, Operands operands) {
  return {t.data, t.desc.dtype, detail::shape5(t.desc), operands};
}

// One output element of each direction: the definition of the convolution, in fp64.
template <class X, class W>
double forward_at(const Geometry& G, const X& x, const W& w, std::int64_t n, std::int64_t k,
                  std::int64_t od, std::int64_t oh, std::int64_t ow) {
  const std::int64_t g = k / G.kg;
  double acc = 0;
  for (std::int64_t c = 0; c < G.cg; ++c)
    for (std::int64_t a = 0; a < G.kd; ++a) {
      const std::int64_t id = od * G.sd - G.pd + a * G.dd;
      if (id < 0 || id >= G.id) continue;
      for (std::int64_t b = 0; b < G.kh; ++b) {
        const std::int64_t ih = oh * G.sh - G.ph + b * G.dh;
        if (ih < 0 || ih >= G.ih) continue;
        for (std::int64_t e = 0; e < G.kw; ++e) {
          const std::int64_t iw = ow * G.sw - G.pw + e * G.dw;
          if (iw < 0 || iw >= G.iw) continue;
          acc += x(n, g * G.cg + c, id, ih, iw) * w(k, c, a, b, e);
        }
      }
    }
  return acc;
}

template <class Y, class W>
double backward_data_at(const Geometry& G, const Y& dy, const W& w, std::int64_t n, std::int64_t c,
                        std::int64_t id, std::int64_t ih, std::int64_t iw) {
  const std::int64_t g = c / G.cg, cl = c % G.cg;
  double acc = 0;
  for (std::int64_t a = 0; a < G.kd; ++a) {
    const std::int64_t td = id + G.pd - a * G.dd;
    if (td < 0 || td % G.sd) continue;
    const std::int64_t od = td / G.sd;
    if (od >= G.od) continue;
    for (std::int64_t b = 0; b < G.kh; ++b) {
      const std::int64_t th = ih + G.ph - b * G.dh;
      if (th < 0 || th % G.sh) continue;
      const std::int64_t oh = th / G.sh;
      if (oh >= G.oh) continue;
      for (std::int64_t e = 0; e < G.kw; ++e) {
        const std::int64_t tw = iw + G.pw - e * G.dw;
        if (tw < 0 || tw % G.sw) continue;
        const std::int64_t ow = tw / G.sw;
        if (ow >= G.ow) continue;
        for (std::int64_t kl = 0; kl < G.kg; ++kl) {
          const std::int64_t k = g * G.kg + kl;
          acc += dy(n, k, od, oh, ow) * w(k, cl, a, b, e);
        }
      }
    }
  }
  return acc;
}

template <class X, class Y>
double backward_weights_at(const Geometry& G, const X& x, const Y& dy, std::int64_t k,
                           std::int64_t cl, std::int64_t a, std::int64_t b, std::int64_t e) {
  const std::int64_t c = (k / G.kg) * G.cg + cl;
  double acc = 0;
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t od = 0; od < G.od; ++od) {
      const std::int64_t id = od * G.sd - G.pd + a * G.dd;
      if (id < 0 || id >= G.id) continue;
      for (std::int64_t oh = 0; oh < G.oh; ++oh) {
        const std::int64_t ih = oh * G.sh - G.ph + b * G.dh;
        if (ih < 0 || ih >= G.ih) continue;
        for (std::int64_t ow = 0; ow < G.ow; ++ow) {
          const std::int64_t iw = ow * G.sw - G.pw + e * G.dw;
          if (iw < 0 || iw >= G.iw) continue;
          acc += x(n, c, id, ih, iw) * dy(n, k, od, oh, ow);
        }
      }
    }
  return acc;
}

// Output dims in logical 5D order for each direction.
std::array<std::int64_t, 5> output_dims5(const Problem& p, const Geometry& G) {
  switch (p.direction) {
    case Direction::forward:
      return {G.n, G.k(), G.od, G.oh, G.ow};
    case Direction::backward_data:
      return {G.n, G.c(), G.id, G.ih, G.iw};
    case Direction::backward_weights:
      return {G.k(), G.cg, G.kd, G.kh, G.kw};
  }
  return {};
}

template <class A, class B>
double element_at(const Problem& p, const Geometry& G, const A& a, const B& b,
                  const std::array<std::int64_t, 5>& i) {
  switch (p.direction) {
    case Direction::forward:
      return forward_at(G, a, b, i[0], i[1], i[2], i[3], i[4]);
    case Direction::backward_data:
      return backward_data_at(G, a, b, i[0], i[1], i[2], i[3], i[4]);
    case Direction::backward_weights:
      return backward_weights_at(G, a, b, i[0], i[1], i[2], i[3], i[4]);
  }
  return 0;
}

std::array<std::int64_t, 5> unflatten(std::int64_t lin, const std::array<std::int64_t, 5>& d) {
  std::array<std::int64_t, 5> i{};
  for (int k = 4; k >= 0; --k) {
    i[k] = lin % d[k];
    lin /= d[k];
  }
  return i;
}

// The two input views of a direction, in the order element_at takes them.
std::pair<const TensorView*, const TensorView*> inputs_of(const Problem& p, const ConvTensors& t) {
  switch (p.direction) {
    case Direction::forward:
      return {&t.x, &t.w};
    case Direction::backward_data:
      return {&t.y, &t.w};
    case Direction::backward_weights:
      return {&t.x, &t.y};
  }
  return {nullptr, nullptr};
}

}  // namespace

Result<std::vector<double>> reference_output(const Problem& p, const ConvTensors& t,
                                             Operands operands) {
  if (auto s = validate(p); !s) return s;
  const Geometry G = detail::geometry(p);
  const auto [ta, tb] = inputs_of(p, t);
  const auto od = output_dims5(p, G);
  std::vector<double> out(static_cast<std::size_t>(od[0] * od[1] * od[2] * od[3] * od[4]));
  std::vector<double> a = to_dense_f64(*ta), b = to_dense_f64(*tb);
  if (operands != Operands::stored) {
    for (double& v : a) v = map_operand(v, operands);
    for (double& v : b) v = map_operand(v, operands);
  }
  detail::reference_rows(p.direction, G, a, b, out);
  return out;
}

double reference_at(const Problem& p, const ConvTensors& t, std::int64_t output_index,
                    Operands operands) {
  const Geometry G = detail::geometry(p);
  const auto [ta, tb] = inputs_of(p, t);
  return element_at(p, G, view_access(*ta, operands), view_access(*tb, operands),
                    unflatten(output_index, output_dims5(p, G)));
}

Status reference_conv(const Problem& p, const ConvTensors& t) {
  auto ref = reference_output(p, t);
  if (!ref) return ref.status();
  const TensorView& out = output_of(p, t);
  const DType dt = out.desc.dtype;
  const std::vector<double>& r = *ref;
  detail::for_each_element(out.desc, [&](std::int64_t lin, std::int64_t off) {
    store_from_float(out.data, off, dt, static_cast<float>(r[static_cast<std::size_t>(lin)]));
  });
  return Status::ok();
}

}  // namespace convguard
