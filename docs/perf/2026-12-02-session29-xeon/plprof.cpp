#include <omp.h>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/host_buffer.hpp"
#include "core/tensor_iter.hpp"
#include "cpu/solvers/bf16_amx_planar.hpp"
using namespace convguard;
static void best_of(cpu::bf16::PlanarTimes& b, const cpu::bf16::PlanarTimes& t) {
  b.copy_x = std::min(b.copy_x, t.copy_x); b.pack_filter = std::min(b.pack_filter, t.pack_filter);
  b.kernel = std::min(b.kernel, t.kernel);
}
int main(int argc, char** argv) {
  const Solver* pl = find_solver("cpu:bf16_planar:amx_bf16");
  const Solver* am = find_solver("cpu:bf16_direct:amx_bf16");
  for (int i = 1; i < argc; ++i) {
    auto p = parse_problem(argv[i]);
    if (!p.is_ok()) { std::printf("parse: %s\n", argv[i]); return 2; }
    if (Status st = pl->check(*p); !st) { std::printf("%s: %s\n", argv[i], st.message().c_str()); continue; }
    TrialTensors t(*p);
    fill_inputs(*p, t, 7, FillMode::uniform);
    const auto G = detail::geometry(*p);
    const auto z = cpu::bf16::planar_sizes(G, detail::shape5(x_desc(*p)).strides);
    auto* xh = static_cast<std::uint32_t*>(allocate_host_buffer(z.x_words * 4 + 64));
    auto* wh = static_cast<std::uint16_t*>(allocate_host_buffer(z.w_elements * 2));
    cpu::bf16::PlanarTimes huge{1e9, 1e9, 1e9};
    for (int r = 0; r < 9; ++r) {
      cpu::bf16::PlanarTimes tm;
      (void)cpu::bf16::forward_planar(G, t.view(), xh, z.x_words, wh, &tm); best_of(huge, tm);
    }
    std::free(xh); std::free(wh);
    const double gf = 2.0 * G.n * G.od * G.oh * G.ow * G.k() * G.c() * G.taps() * 1e-9;
    TrialOptions o; o.time = true; o.iterations = 9;
    double ra = 1e9, rb = 1e9;
    for (int rep = 0; rep < 2; ++rep) { ra = std::min(ra, run_trial(*pl, *p, t, o).min_ms); rb = std::min(rb, run_trial(*am, *p, t, o).min_ms); }
    std::printf("%-56s copy_x %.3f pack_w %.3f kernel %.3f (%.0f GFLOP/s) | run planar %.3f direct_amx %.3f ms\n",
                argv[i], huge.copy_x, huge.pack_filter, huge.kernel, gf / huge.kernel * 1e3, ra, rb);
    std::fflush(stdout);
  }
}
