// Host overhead of one call of a selected solver through the library API (Context::plan once,
// then ConvPlan::run per call): the time run() takes on the host to enqueue the work, no probing,
// no synchronisation. Calls are timed in batches of 100 with a synchronisation between batches
// (untimed), so the launch queue never fills and the figure is the host's, not the GPU's. The
// same is measured for a solver called directly (Solver::run, --solver ID), e.g. a cuDNN
// algorithm through its plugin. Not a test: it asserts nothing about time (docs/perf.md).
//   usage: api_overhead [--device cuda:0] [--problem S] [--db PATH] [--solver ID]... [--tf32]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/device_memory.hpp"
#include "convguard/canonical.hpp"
#include "convguard/context.hpp"
#include "convguard/registry.hpp"
#include "probe/device.hpp"

using namespace convguard;

namespace {

double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

// Device buffers for p's tensors, freed on exit.
struct Tensors {
  std::unique_ptr<detail::DeviceMemory> mem;
  std::vector<void*> ptrs;
  ConvTensors t;
  ~Tensors() {
    for (void* p : ptrs) mem->release(p);
  }
  Status allocate(const Problem& p) {
    const TensorDesc d[3] = {x_desc(p), w_desc(p), y_desc(p)};
    TensorView* v[3] = {&t.x, &t.w, &t.y};
    for (int i = 0; i < 3; ++i) {
      void* ptr = nullptr;
      const std::size_t bytes = static_cast<std::size_t>(d[i].span()) * size_of(p.dtype);
      if (auto st = mem->allocate(&ptr, bytes, "tensor"); !st) return st;
      ptrs.push_back(ptr);
      if (auto st = mem->poison(ptr, bytes); !st) return st;  // contents do not matter here
      *v[i] = {ptr, d[i]};
    }
    return Status::ok();
  }
};

// Median and minimum host microseconds per call of `call`, over `batches` batches of 100.
template <typename Call>
std::pair<double, double> per_call_us(Call&& call, detail::DeviceMemory& mem, int batches) {
  for (int i = 0; i < 20; ++i) (void)call();  // warm-up: module load, plan caches
  (void)mem.synchronize("warm-up");
  std::vector<double> per;
  for (int b = 0; b < batches; ++b) {
    const double t0 = now_us();
    for (int i = 0; i < 100; ++i) (void)call();
    per.push_back((now_us() - t0) / 100);
    (void)mem.synchronize("batch");
  }
  std::sort(per.begin(), per.end());
  return {per[per.size() / 2], per.front()};
}

std::vector<std::string> args(int argc, char** argv, const std::string& name) {
  std::vector<std::string> v;
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) v.emplace_back(argv[i + 1]);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  auto one = [&](const char* name, const char* def) {
    auto v = args(argc, argv, name);
    return v.empty() ? std::string(def) : v.back();
  };
  ContextOptions o;
  o.device = one("--device", "cuda:0");
  o.db_path = one("--db", "");
  for (int i = 1; i < argc; ++i) o.allow_tf32 = o.allow_tf32 || std::string(argv[i]) == "--tf32";
  const std::string text = one("--problem", "mb1ic32ih14oc32oh14kh3ph1");
  auto p = parse_problem(text);
  if (!p) {
    std::fprintf(stderr, "api_overhead: --problem: %s\n", p.status().message().c_str());
    return 2;
  }
  auto ctx = Context::open(o);
  if (!ctx) {
    std::fprintf(stderr, "api_overhead: %s\n", ctx.status().message().c_str());
    return 1;
  }
  auto dev = probe::open_device(o.device);
  Tensors t{dev ? device_memory_for(dev->kind, dev->plugin_kind) : nullptr, {}, {}};
  if (!t.mem) {
    std::fprintf(stderr, "api_overhead: --device %s has no device memory calls\n",
                 o.device.c_str());
    return 1;
  }
  if (auto st = t.allocate(*p); !st) {
    std::fprintf(stderr, "api_overhead: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("%s; problem %s\n", (*ctx)->device_description().c_str(), to_canonical(*p).c_str());
  auto plan = (*ctx)->plan(*p);
  if (!plan) {
    std::fprintf(stderr, "api_overhead: plan: %s\n", plan.status().message().c_str());
    return 1;
  }
  ConvPlan& cp = **plan;
  const auto [med, best] = per_call_us([&] { return cp.run(t.t); }, *t.mem, 200);
  std::printf(
      "Context::plan chose %s (%s)\n  ConvPlan::run host time per call: median %.2f us, "
      "min %.2f us\n",
      std::string(cp.solver_id()).c_str(), cp.why().c_str(), med, best);
  for (const std::string& id : args(argc, argv, "--solver")) {
    const Solver* s = find_solver(id);
    auto sp = s ? s->plan(*p) : Result<std::unique_ptr<Plan>>(invalid_argument("unknown"));
    auto ws = s ? s->workspace_bytes(*p) : Result<std::size_t>(std::size_t{0});
    if (!s || !s->check(*p) || !sp || !ws) {
      std::printf("  %s: not applicable or unknown here\n", id.c_str());
      continue;
    }
    void* work = nullptr;
    if (*ws && !t.mem->allocate(&work, *ws, "workspace")) continue;
    const std::span<std::byte> wspan(static_cast<std::byte*>(work), *ws);
    const auto [m, b] = per_call_us([&] { return s->run(**sp, t.t, wspan); }, *t.mem, 200);
    std::printf("  %s called directly (Solver::run): median %.2f us, min %.2f us\n", id.c_str(), m,
                b);
    if (work) t.mem->release(work);
  }
  return 0;
}
