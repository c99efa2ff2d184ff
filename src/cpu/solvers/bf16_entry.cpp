// The portable side of cpu:bf16_direct's AVX-512 kernels (bf16_kernels.hpp): the tables and
// per-thread buffers they read, made here so that no library template is compiled for AVX-512.
#include <omp.h>

#include <vector>

#include "cpu/reusable_scratch.hpp"
#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"

namespace convguard::cpu::bf16 {

void forward(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
             const std::uint32_t* w, const Writer& out, const RowPlacement& at) {
  const std::int64_t C2 = pairs(G.c());
  std::vector<std::int64_t> tap_offset;
  for (std::int64_t a = 0; a < G.kd; ++a)
    for (std::int64_t b = 0; b < G.kh; ++b)
      for (std::int64_t e = 0; e < G.kw; ++e)
        tap_offset.push_back(((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C2);
  // Rows per block: the fewest that make whole 6-pixel tiles, while every thread gets 4 blocks.
  const std::int64_t threads = omp_get_max_threads(), rows = G.n * G.od * G.oh;
  std::int64_t R = 1;
  while (R < 6 && R * G.ow % 6) ++R;
  if (rows / R < 4 * threads) R = 1;
  struct RowBuffers;  // per thread: R output rows of K channels, written before they are read
  float* buffers =
      reusable_scratch<RowBuffers, float>(static_cast<std::size_t>(threads * R * G.ow * G.k()));
  ForwardArgs f{G, xs, x, w, tap_offset.data(), R, buffers, {}};
  struct Target {
    const Writer& out;
    const RowPlacement& at;
  } target{out, at};
  f.out.context = &target;
  f.out.store = [](const void* context, std::int64_t n, std::int64_t i, std::int64_t j,
                   const float* row) {
    const auto& [out, at] = *static_cast<const Target*>(context);
    out.row(n, at.first[0] + i * at.step[0], at.first[1] + j * at.step[1], row, at.first[2],
            at.step[2], at.count);
  };
  forward_avx512(f);
}

void backward_weights(const detail::Geometry& G, const Sizes5& xs, const std::uint32_t* x,
                      const std::uint32_t* dy, float* dwt) {
  const std::int64_t C = G.c();
  std::vector<std::int64_t> col, row_x;
  for (std::int64_t a = 0; a < G.kd; ++a)
    for (std::int64_t b = 0; b < G.kh; ++b)
      for (std::int64_t e = 0; e < G.kw; ++e)
        for (std::int64_t c = 0; c < C; ++c)
          col.push_back(((a * G.dd * xs.h + b * G.dh) * xs.w + e * G.dw) * C + c);
  for (std::int64_t n = 0; n < G.n; ++n)
    for (std::int64_t od = 0; od < G.od; ++od)
      for (std::int64_t oh = 0; oh < G.oh; ++oh)
        row_x.push_back(((n * xs.d + od * G.sd) * xs.h + oh * G.sh) * xs.w * C);
  backward_weights_avx512({G, xs, x, dy, col.data(), row_x.data(), dwt});
}

}  // namespace convguard::cpu::bf16
