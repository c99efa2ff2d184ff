// Session 26: cpu:bf16_planar:amx_bf16's forward on the device host by step (x's pair copy, the
// filter's pack, the kernel with its stores; fastest of 9 each), and the planar and
// bf16_direct:amx_bf16 solvers' runs interleaved.
#include <omp.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "cpu/solvers/bf16_amx_planar.hpp"
using namespace convguard;
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
    const auto z = cpu::bf16::planar_sizes(G);
    std::vector<std::uint32_t> x(z.x_words);
    std::vector<std::uint16_t> w(z.w_elements);
    cpu::bf16::PlanarTimes best{1e9, 1e9, 1e9};
    for (int r = 0; r < 9; ++r) {
      cpu::bf16::PlanarTimes tm;
      cpu::bf16::forward_planar(G, t.view(), x.data(), w.data(), &tm);
      best.copy_x = std::min(best.copy_x, tm.copy_x); best.pack_filter = std::min(best.pack_filter, tm.pack_filter); best.kernel = std::min(best.kernel, tm.kernel);
    }
    const double gf = 2.0 * G.n * G.od * G.oh * G.ow * G.k() * G.c() * G.taps() * 1e-9;
    TrialOptions o; o.time = true; o.iterations = 9;
    double ra = 1e9, rb = 1e9;
    for (int rep = 0; rep < 2; ++rep) { ra = std::min(ra, run_trial(*pl, *p, t, o).min_ms); rb = std::min(rb, run_trial(*am, *p, t, o).min_ms); }
    std::printf("%-60s copy_x %.3f (%.1f MB) pack_w %.3f kernel %.3f (%.0f GFLOP/s) | run planar %.3f direct_amx %.3f ms\n", argv[i], best.copy_x, z.x_words * 4e-6, best.pack_filter, best.kernel, gf / best.kernel * 1e3, ra, rb);
    std::fflush(stdout);
  }
}
