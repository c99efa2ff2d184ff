// Session 26: cpu:bf16_direct:amx_bf16's backward-weights on the device host, by phase: x's
// copies, dy's pairs, the kernel (item order x block sizes x prefetch distances, interleaved,
// fastest of 7 rounds each), the whole AMX path; then the AMX and AVX512_BF16 solvers' runs interleaved.
#include <omp.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_kernels.hpp"
#include "cpu/solvers/bf16_pack.hpp"
using namespace convguard;
template <class F> double once(F f) { double t0 = omp_get_wtime(); f(); return (omp_get_wtime() - t0) * 1e3; }
int main(int argc, char** argv) {
  const Solver* amx = find_solver("cpu:bf16_direct:amx_bf16");
  const Solver* avx = find_solver("cpu:bf16_direct:avx512_bf16");
  for (int i = 1; i < argc; ++i) {
    auto p = parse_problem(argv[i]);
    if (!p.is_ok()) { std::printf("parse: %s\n", argv[i]); return 2; }
    if (Status st = amx->check(*p); !st) { std::printf("%s: %s\n", argv[i], st.message().c_str()); continue; }
    TrialTensors t(*p);
    fill_inputs(*p, t, 7, FillMode::uniform);
    const auto G = detail::geometry(*p);
    const auto L = cpu::bf16::amx_backward_weights_layout(G);
    std::vector<std::uint16_t> x(L.x_elements);
    std::vector<std::uint32_t> dy(L.dy_words);
    std::vector<float> dwt(L.splits * L.dwt_floats);
    const double gf = 2.0 * G.n * G.od * G.oh * G.ow * G.k() * G.c() * G.taps() * 1e-9;
    std::printf("%-66s per_column %d copies %ld phases %zu wv %ld rows %ld groups %zu chunks %ld splits %ld, %.2f GFLOP\n", argv[i], L.per_column, L.copies, L.phases.size(), L.wv, L.rows, L.group_x.size(), L.chunks, L.splits, gf);
    cpu::bf16::AmxBackwardWeightsArgs a{x.data(), L.x_row, L.group_x.data(), (std::int64_t)L.group_x.size(), L.rows, dy.data(), L.kp, L.chunks, L.splits, L.block_chunks, 0, dwt.data()};
    const std::int64_t blocks[] = {8, 16, 32, 128}, pf[] = {0, 2};
    double kbest[2][4][2], tx = 1e9, tdy = 1e9, whole = 1e9;
    for (auto& q : kbest) for (auto& r : q) for (double& v : r) v = 1e9;
    for (int rep = 0; rep < 7; ++rep) {
      tx = std::min(tx, once([&] { cpu::bf16::copy_x_to_grid(G, L, cpu::bf16::Reader(t.view().x), x.data()); }));
      tdy = std::min(tdy, once([&] { cpu::bf16::pack_dy_to_grid(G, L, cpu::bf16::Reader(t.view().y), dy.data()); }));
      for (int o = 0; o < 2; ++o) for (int b = 0; b < 4; ++b) for (int f = 0; f < 2; ++f) {
        a.block_chunks = blocks[b]; a.prefetch = pf[f];
        kbest[o][b][f] = std::min(kbest[o][b][f], once([&] { cpu::bf16::backward_weights_amx(a); }));
      }
      whole = std::min(whole, once([&] { cpu::bf16::backward_weights_on_amx(G, t.view(), x.data(), dy.data(), dwt.data()); }));
    }
    std::printf("  copy_x %.3f pack_dy %.3f whole %.3f ms; kernel ms (GFLOP/s) by order x block x prefetch:", tx, tdy, whole);
    for (int o = 0; o < 2; ++o) for (int b = 0; b < 4; ++b) { std::printf("\n    %s block %3ld:", o ? "taps-fastest" : "rows-fastest", blocks[b]); for (int f = 0; f < 2; ++f) std::printf("  pf%ld %.3f (%.0f)", pf[f], kbest[o][b][f], gf / kbest[o][b][f] * 1e3); }
    TrialOptions o; o.time = true; o.iterations = 9;
    double ra = 1e9, rv = 1e9; bool va = false, vv = false;
    for (int rep = 0; rep < 2; ++rep) {
      const TrialResult r1 = run_trial(*amx, *p, t, o); ra = std::min(ra, r1.min_ms); va = r1.verdict && r1.verdict->ok;
      const TrialResult r2 = run_trial(*avx, *p, t, o); rv = std::min(rv, r2.min_ms); vv = r2.verdict && r2.verdict->ok;
    }
    std::printf("\n  run amx %.3f ms (%s) avx512_bf16 %.3f ms (%s)\n", ra, va ? "verified" : "NOT VERIFIED", rv, vv ? "verified" : "NOT VERIFIED");
    std::fflush(stdout);
  }
}
