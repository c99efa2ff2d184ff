// EXPERIMENT harness, kept as the record of what ran (session 34; not built by the project: it was
// added to bench/CMakeLists.txt for the experiment only). One solver on one problem, calls
// interleaved between settings of one environment variable read by the solver at run time (an
// experiment build's switch); per setting min, p10, median. AB_BWDD=1: backward-data.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
using namespace convguard;
static double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char** argv) {
  if (argc < 6) { std::fprintf(stderr, "usage: env_ab PROBLEM SOLVER VAR ITERS V1 [V2...]\n"); return 2; }
  auto p = parse_problem(argv[1]);
  if (!p) { std::fprintf(stderr, "bad problem\n"); return 2; }
  if (const char* b = std::getenv("AB_BWDD"); b && *b) p->direction = Direction::backward_data;
  const Solver* s = find_solver(argv[2]);
  if (!s || !s->check(*p)) { std::fprintf(stderr, "solver n/a\n"); return 2; }
  const char* var = argv[3];
  const int iters = std::atoi(argv[4]);
  std::vector<std::string> vals(argv + 5, argv + argc);
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  auto plan = s->plan(*p);
  auto ws = s->workspace_bytes(*p);
  std::vector<std::byte> work(*ws + 64);
  std::span<std::byte> wspan(work.data(), *ws);
  std::vector<std::vector<double>> times(vals.size());
  for (int i = 0; i < iters; ++i)
    for (std::size_t v = 0; v < vals.size(); ++v) {
      setenv(var, vals[v].c_str(), 1);
      for (int k = 0; k < 2; ++k) {
        const double t0 = now_us();
        if (!s->run(**plan, t.view(), wspan)) { std::fprintf(stderr, "run failed\n"); return 1; }
        if (k == 1 || i == 0) times[v].push_back(now_us() - t0);
      }
    }
  std::printf("%s %s\n", argv[1], argv[2]);
  for (std::size_t v = 0; v < vals.size(); ++v) {
    auto& x = times[v];
    std::sort(x.begin(), x.end());
    std::printf("  %s=%-6s min %8.1f us  p10 %8.1f  median %8.1f\n", var, vals[v].c_str(), x[0],
                x[x.size() / 10], x[x.size() / 2]);
  }
}
