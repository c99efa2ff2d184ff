// Phase times of cpu:bf16_direct:amx_bf16's forward on the device host: pack x, pack filter,
// the AMX pass (into NCHW y, and into NHWC y), and the whole solver run through run_trial.
#include <omp.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bf16_pack.hpp"
#include "cpu/staged_solver.hpp"
using namespace convguard;
template <class F> double best(F f) { double b = 1e9; for (int i = 0; i < 15; ++i) { double t0 = omp_get_wtime(); f(); b = std::min(b, omp_get_wtime() - t0); } return b * 1e3; }
int main(int argc, char** argv) {
  const Solver* s = find_solver("cpu:bf16_direct:amx_bf16");
  for (int i = 1; i < argc; ++i) {
    auto p = parse_problem(argv[i]);
    if (!p.is_ok()) { std::printf("parse: %s\n", argv[i]); return 2; }
    if (Status st = s->check(*p); !st) { std::printf("%s: %s\n", argv[i], st.message().c_str()); continue; }
    TrialTensors t(*p);
    fill_inputs(*p, t, 7, FillMode::uniform);
    const auto G = detail::geometry(*p);
    auto K = cpu::bf16::Kernel::amx_bf16;
    ConvTensors c = t.view();
    const cpu::Sizes5 xs = cpu::padded(cpu::Sizes5{G.n, G.c(), G.id, G.ih, G.iw}, cpu::forward_padding(*p));
    std::vector<std::uint32_t> x(xs.n * xs.d * xs.h * xs.w * ((G.c() + 1) / 2) + cpu::bf16::x_slack_words(G, K));
    std::vector<std::uint32_t> w(cpu::bf16::packed_filter_words(G, K));
    const double tx = best([&] { cpu::bf16::pack_channel_pairs(cpu::bf16::Reader(c.x), cpu::forward_padding(*p), x.data()); });
    const double tw = best([&] { cpu::bf16::pack_filter(cpu::bf16::Reader(c.w), G, cpu::bf16::SubFilter{false, {G.kd, G.kh, G.kw}, {0, 0, 0}, {1, 1, 1}}, w.data(), cpu::bf16::filter_rows(G, K)); });
    const double tf = best([&] { cpu::bf16::forward(G, xs, x.data(), w.data(), cpu::bf16::Writer(c.y), K); });
    TrialOptions o; o.time = true; o.iterations = 15;
    const TrialResult r = run_trial(*s, *p, t, o);
    const double gf = 2.0 * G.n * G.od * G.oh * G.ow * G.k() * G.c() * G.taps() * 1e-9;
    std::printf("%-70s pack_x %.3f pack_w %.3f amx+store %.3f | run %.3f ms  (%.2f GFLOP, amx+store %.0f GFLOP/s) %s\n", argv[i], tx, tw, tf,
                r.min_ms, gf, gf / tf * 1e3, r.verdict && r.verdict->ok ? "verified" : "NOT VERIFIED");
  }
}
