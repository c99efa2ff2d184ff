// convguard_bench: times every convguard CPU solver on fp32 forward problems against oneDNN in
// the same run, interleaved (convguard solvers, oneDNN, oneDNN with reorders, then again), since
// this machine's clock drifts 1.2-1.5x over minutes and only side-by-side ratios mean anything.
//
//   convguard_bench --suite data/suites/resnet50.txt [--reps 5] [--threads N] [--solver ID]
//
// Two ratios per problem (> 1: convguard is faster):
//   vs exec:     oneDNN's convolution alone, with the layouts it prefers (format_tag::any);
//   vs reorder:  oneDNN plus the reorders a caller with plain NCHW tensors pays per call
//                (src and weights in, dst out) -- what convguard's time includes.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"

#ifdef CONVGUARD_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

using namespace convguard;

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#ifdef CONVGUARD_HAVE_DNNL
// oneDNN forward convolution of p with plain NCHW user tensors; run_exec times the primitive
// alone (preferred layouts), run_with_reorders adds the per-call reorders from/to NCHW.
struct Onednn {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  dnnl::memory user_src, user_wei, user_dst, src, wei, dst;
  dnnl::reorder r_src, r_wei, r_dst;
  bool reorder_src = false, reorder_wei = false, reorder_dst = false;

  explicit Onednn(const Problem& p, const float* x, const float* w) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const bool d3 = p.spatial_dims == 3;
    const int first = d3 ? 0 : 1;
    dnnl::memory::dims xs{p.n, p.c}, ys{p.n, p.k}, ws, strides, dil, pl, pr;
    const Dims3 o = p.output_dims();
    for (int d = first; d < 3; ++d) {
      xs.push_back(p.input[d]);
      ys.push_back(o[d]);
      strides.push_back(p.stride[d]);
      dil.push_back(p.dilation[d] - 1);
      pl.push_back(p.pad_begin[d]);
      pr.push_back(p.pad_end[d]);
    }
    if (p.g > 1)
      ws = {p.g, p.k / p.g, p.c / p.g};
    else
      ws = {p.k, p.c};
    for (int d = first; d < 3; ++d) ws.push_back(p.filter[d]);
    const tag act = d3 ? tag::ncdhw : tag::nchw;
    const tag wt = p.g > 1 ? (d3 ? tag::goidhw : tag::goihw) : (d3 ? tag::oidhw : tag::oihw);
    auto any = [&](const dnnl::memory::dims& d) {
      return dnnl::memory::desc(d, dt::f32, tag::any);
    };
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, any(xs), any(ws),
                                         any(ys), strides, dil, pl, pr);
    dnnl::convolution_forward::primitive_desc pd(desc, eng);
    conv = dnnl::convolution_forward(pd);
    user_src = dnnl::memory({xs, dt::f32, act}, eng, const_cast<float*>(x));
    user_wei = dnnl::memory({ws, dt::f32, wt}, eng, const_cast<float*>(w));
    user_dst = dnnl::memory({ys, dt::f32, act}, eng);
    src = pd.src_desc() == user_src.get_desc() ? user_src : dnnl::memory(pd.src_desc(), eng);
    wei =
        pd.weights_desc() == user_wei.get_desc() ? user_wei : dnnl::memory(pd.weights_desc(), eng);
    dst = pd.dst_desc() == user_dst.get_desc() ? user_dst : dnnl::memory(pd.dst_desc(), eng);
    reorder_src = src != user_src;
    reorder_wei = wei != user_wei;
    reorder_dst = dst != user_dst;
    if (reorder_src) r_src = dnnl::reorder(user_src, src);
    if (reorder_wei) r_wei = dnnl::reorder(user_wei, wei);
    if (reorder_dst) r_dst = dnnl::reorder(dst, user_dst);
    reorders();  // weights and src in the preferred layout for exec-only runs
  }
  void reorders() {
    if (reorder_src) r_src.execute(strm, user_src, src);
    if (reorder_wei) r_wei.execute(strm, user_wei, wei);
  }
  void exec() {
    conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
  void with_reorders() {
    reorders();
    exec();
    if (reorder_dst) r_dst.execute(strm, dst, user_dst);
    strm.wait();
  }
};
#endif

struct Args {
  std::vector<std::string> suites;
  int reps = 5;
  std::string solver;
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "convguard_bench: %s needs a value\n", s.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (s == "--suite")
      a.suites.push_back(value());
    else if (s == "--reps")
      a.reps = std::atoi(value().c_str());
    else if (s == "--threads")
      omp_set_num_threads(std::atoi(value().c_str()));
    else if (s == "--solver")
      a.solver = value();
    else {
      std::fprintf(stderr,
                   "usage: convguard_bench --suite FILE [--reps N] [--threads N] [--solver ID]\n");
      return 2;
    }
  }
  if (a.suites.empty() || a.reps < 1) {
    std::fprintf(stderr, "convguard_bench: give --suite FILE (and --reps >= 1)\n");
    return 2;
  }
  std::vector<Problem> problems;
  for (const auto& path : a.suites) {
    auto suite = read_problem_file(path);
    if (!suite) {
      std::fprintf(stderr, "convguard_bench: --suite: %s\n", suite.status().message().c_str());
      return 2;
    }
    for (const Problem& p : *suite) {
      if (p.direction == Direction::forward && p.dtype == DType::f32) problems.push_back(p);
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("threads %d, reps %d (median), fp32 forward, NCHW user tensors\n",
              omp_get_max_threads(), a.reps);
#ifdef CONVGUARD_HAVE_DNNL
  const dnnl_version_t* dv = dnnl_version();
  std::printf("peer: oneDNN %d.%d.%d (%s)\n", dv->major, dv->minor, dv->patch, dv->hash);
#else
  std::printf("peer: none: oneDNN was not found when this was configured (install libdnnl-dev); "
              "the comparison is off, only convguard's times are shown\n");
#endif
  std::printf("%-44s %7s %-24s %9s %9s %9s %8s %8s\n", "problem", "GFLOP", "best convguard solver",
              "cg ms", "dnnl ms", "dnnl+ro", "vs exec", "vs ro");
  double log_exec = 0, log_ro = 0;
  int counted = 0;
  for (const Problem& p : problems) {
    TrialTensors t(p);
    fill_inputs(p, t, 1, FillMode::uniform);
    std::vector<const Solver*> solvers;
    for (const Solver* s : solvers_on(Device::cpu)) {
      if (s->id() == "cpu:ref" || !s->check(p).is_ok()) continue;
      if (!a.solver.empty() && s->id() != a.solver) continue;
      solvers.push_back(s);
    }
    std::vector<std::vector<double>> times(solvers.size());
    std::vector<std::size_t> ws_bytes(solvers.size());
    std::vector<std::vector<std::byte>> ws(solvers.size());
    std::vector<std::unique_ptr<Plan>> plans(solvers.size());
    // Warm-up run of each solver; one more than 10x slower than the fastest so far is not
    // timed further (it would only make the sweep long), and is listed as such.
    double fastest = INFINITY;
    std::string dropped, failed;
    for (std::size_t i = 0; i < solvers.size(); ++i) {
      ws[i].resize(*solvers[i]->workspace_bytes(p));
      plans[i] = std::move(*solvers[i]->plan(p));
      const double t0 = now_ms();
      const Status st = solvers[i]->run(*plans[i], t.view(), ws[i]);
      const double warm = now_ms() - t0;
      if (!st.is_ok()) {  // a failed run is not a time: list it with its reason, never time it
        failed += std::string(failed.empty() ? "" : ", ") + std::string(solvers[i]->id()) + " (" +
                  st.message() + ")";
        plans[i].reset();
        continue;
      }
      if (warm > 10 * fastest && warm > 20) {
        dropped += std::string(dropped.empty() ? "" : ", ") + std::string(solvers[i]->id());
        plans[i].reset();
        continue;
      }
      fastest = std::min(fastest, warm);
    }
    std::vector<double> dnnl_exec, dnnl_ro;
#ifdef CONVGUARD_HAVE_DNNL
    Onednn dn(p, static_cast<const float*>(t.x.data()), static_cast<const float*>(t.w.data()));
    dn.exec();
    dn.with_reorders();
#endif
    for (int r = 0; r < a.reps; ++r) {
      for (std::size_t i = 0; i < solvers.size(); ++i) {
        if (!plans[i]) continue;
        const double t0 = now_ms();
        const Status st = solvers[i]->run(*plans[i], t.view(), ws[i]);
        times[i].push_back(now_ms() - t0);
        if (!st.is_ok()) {
          failed += std::string(failed.empty() ? "" : ", ") + std::string(solvers[i]->id()) +
                    " (" + st.message() + ")";
          plans[i].reset();
        }
      }
#ifdef CONVGUARD_HAVE_DNNL
      double t0 = now_ms();
      dn.exec();
      dnnl_exec.push_back(now_ms() - t0);
      t0 = now_ms();
      dn.with_reorders();
      dnnl_ro.push_back(now_ms() - t0);
#endif
    }
    std::size_t best = 0;
    while (best < solvers.size() && !plans[best]) ++best;
    for (std::size_t i = best + 1; i < solvers.size(); ++i) {
      if (plans[i] && median(times[i]) < median(times[best])) best = i;
    }
    const double cg = best < solvers.size() ? median(times[best]) : NAN;
    const double de = median(dnnl_exec), dr = median(dnnl_ro);
    const std::string name = p.name.empty() ? to_canonical(p) : p.name;
    std::printf("%-44.44s %7.2f %-24s %9.3f %9.3f %9.3f %8.2f %8.2f\n", name.c_str(),
                p.flops() / 1e9,
                best < solvers.size() ? std::string(solvers[best]->id()).c_str() : "-", cg, de, dr,
                de / cg, dr / cg);
    std::printf("    convguard driver --problem '%s' -S %s -t 1\n", to_canonical(p).c_str(),
                best < solvers.size() ? std::string(solvers[best]->id()).c_str() : "-");
    std::printf("    others (median ms):");
    for (std::size_t i = 0; i < solvers.size(); ++i) {
      if (plans[i] && i != best)
        std::printf(" %s %.3f", std::string(solvers[i]->id()).c_str(), median(times[i]));
    }
    std::printf("%s%s\n", dropped.empty() ? "" : ("; >10x slower, not timed: " + dropped).c_str(),
                failed.empty() ? "" : ("; FAILED, not timed: " + failed).c_str());
    if (std::isfinite(de / cg) && std::isfinite(dr / cg)) {
      log_exec += std::log(de / cg);
      log_ro += std::log(dr / cg);
      ++counted;
    }
  }
  if (counted) {
    std::printf(
        "geomean over %d problems: convguard speed / oneDNN: vs exec %.3f, vs with-reorders %.3f\n",
        counted, std::exp(log_exec / counted), std::exp(log_ro / counted));
  }
  return 0;
}
