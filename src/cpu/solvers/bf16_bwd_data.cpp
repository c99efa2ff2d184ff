// cpu:bf16_direct's backward-data: any stride, by stride phases, on the forward kernel.
//
// Along one dimension (stride s, begin padding p, filter k, dilation 1), dx[i] sums dy[o] * w[r]
// over o * s + r - p = i. The dx indices i with (i + p) mod s = phi (a phase) take exactly the
// taps r = phi + s * j, and over them dx is a stride-1 correlation of dy with those taps in
// reverse order: dx[first + s * t] = sum_j dy[base + t - j] * w[phi + s * j]. So each phase of
// every dimension is one forward pass of the stride-1 kernel over dy (K input channels) with a
// flipped sub-filter (C output channels), writing every s-th pixel of dx. Stride 1 is one phase:
// the filter flipped, begin padding k - 1 - p. All phases read one padded pair copy of dy, each
// from its own origin. A phase no tap reaches (k < s) is zeros.
#include <algorithm>
#include <array>
#include <vector>

#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"

namespace convguard::cpu::bf16 {
namespace {

using detail::Geometry;

// One phase along one dimension.
struct Phase {
  std::int64_t first = 0, count = 0;  // dx indices first, first + s, ... (count of them)
  std::int64_t tap0 = 0, taps = 0;    // filter taps tap0 + s * j, j < taps
  std::int64_t pad = 0;               // the sub-correlation's begin padding (may be negative)
  std::int64_t end = 0;               // how far its reads pass dy's end (0 if they do not)
};

Phase phase(std::int64_t I, std::int64_t O, std::int64_t k, std::int64_t s, std::int64_t p,
            std::int64_t phi) {
  Phase r;
  r.tap0 = phi;
  r.taps = phi < k ? (k - phi + s - 1) / s : 0;
  r.first = ((phi - p) % s + s) % s;
  r.count = r.first < I ? (I - r.first + s - 1) / s : 0;
  const std::int64_t base = (r.first + p - phi) / s;  // exact: first + p = phi (mod s)
  r.pad = r.taps - 1 - base;
  r.end = std::max<std::int64_t>(0, r.count - 1 + base - (O - 1));
  return r;
}

// Every phase of the three dimensions (depth, height, width).
struct Phases {
  std::array<std::vector<Phase>, 3> dim;
  Padding buffer;  // dy's padding in the shared pair copy: room for every phase's reads
};

Phases phases(const Problem& p) {
  Phases ph;
  for (int d = 0; d < 3; ++d) {
    std::int64_t begin = 0, end = 0;
    for (std::int64_t phi = 0; phi < p.stride[d]; ++phi) {
      const Phase f = phase(p.input[d], p.output(d), p.filter[d], p.stride[d], p.pad_begin[d], phi);
      ph.dim[d].push_back(f);
      if (f.taps) begin = std::max(begin, f.pad);
    }
    // A phase's last read is dy index count - 1 + base (its origin moves with begin - pad, its
    // reads the other way): end padding is what passes dy's end, whatever begin is.
    for (const Phase& f : ph.dim[d])
      if (f.taps) end = std::max(end, f.end);
    ph.buffer.begin[d] = begin;
    ph.buffer.end[d] = end;
  }
  return ph;
}

// The phase as a stride-1 forward problem over dy: K in, C out, its taps and pixels.
Geometry phase_geometry(const Geometry& G, const Phase& a, const Phase& b, const Phase& e) {
  Geometry F = G;
  F.cg = G.kg, F.kg = G.cg;
  F.id = G.od, F.ih = G.oh, F.iw = G.ow;
  F.od = a.count, F.oh = b.count, F.ow = e.count;
  F.kd = a.taps, F.kh = b.taps, F.kw = e.taps;
  F.sd = F.sh = F.sw = F.dd = F.dh = F.dw = 1;
  F.pd = F.ph = F.pw = 0;
  return F;
}

}  // namespace

std::int64_t backward_data_filter_words(const Problem& p, Kernel kernel) {
  const Geometry G = detail::geometry(p);
  const Phases ph = phases(p);
  std::int64_t most = 0;
  for (const Phase& a : ph.dim[0])
    for (const Phase& b : ph.dim[1])
      for (const Phase& e : ph.dim[2])
        if (a.taps && b.taps && e.taps)
          most = std::max(most, packed_filter_words(phase_geometry(G, a, b, e), kernel));
  return most;
}

Sizes5 backward_data_dy_sizes(const Problem& p) {
  const Geometry G = detail::geometry(p);
  return padded(Sizes5{G.n, G.k(), G.od, G.oh, G.ow}, phases(p).buffer);
}

void backward_data(const Problem& p, const ConvTensors& t, std::uint32_t* dy,
                   std::uint32_t* filter, Kernel kernel) {
  const Geometry G = detail::geometry(p);
  const Phases ph = phases(p);
  const Sizes5 ds = backward_data_dy_sizes(p);
  const std::int64_t K2 = pairs(G.k());
  pack_channel_pairs(Reader(t.y), ph.buffer, dy);
  const Reader w(t.w);
  const Writer dx(t.x);
  for (const Phase& a : ph.dim[0])
    for (const Phase& b : ph.dim[1])
      for (const Phase& e : ph.dim[2]) {
        if (!a.count || !b.count || !e.count) continue;
        if (!a.taps || !b.taps || !e.taps) {
          // No tap reaches these pixels of dx: their gradient is zero.
          const std::vector<float> zeros(static_cast<std::size_t>(e.count * G.c()), 0.0f);
#pragma omp parallel for collapse(3) schedule(static)
          for (std::int64_t n = 0; n < G.n; ++n)
            for (std::int64_t i = 0; i < a.count; ++i)
              for (std::int64_t j = 0; j < b.count; ++j)
                dx.row(n, a.first + i * G.sd, b.first + j * G.sh, zeros.data(), e.first, G.sw,
                       e.count);
          continue;
        }
        SubFilter f;
        f.swap_and_flip = true;
        f.taps = {a.taps, b.taps, e.taps};
        f.first = {a.tap0, b.tap0, e.tap0};
        f.step = {G.sd, G.sh, G.sw};
        const Geometry F = phase_geometry(G, a, b, e);
        pack_filter(w, G, f, filter, filter_rows(F, kernel));
        // Its padded index 0 is dy index -pad: buffer index buffer.begin - pad.
        const std::int64_t od = ph.buffer.begin[0] - a.pad, oh = ph.buffer.begin[1] - b.pad,
                           ow = ph.buffer.begin[2] - e.pad;
        const std::uint32_t* origin = dy + ((od * ds.h + oh) * ds.w + ow) * K2;
        forward(F, ds, origin, filter, dx, kernel,
                {{a.first, b.first, e.first}, {G.sd, G.sh, G.sw}, e.count});
      }
}

}  // namespace convguard::cpu::bf16
