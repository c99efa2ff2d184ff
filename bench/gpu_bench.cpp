// The GPU benchmark: every convguard GPU solver and every cuDNN algorithm (the cuDNN plugin, when
// loaded through CONVGUARD_PLUGINS) on a suite, side by side in one run, timed with device events:
// warm-up runs first, then the median of many runs, each behind a short GPU-side delay so launch
// overhead is not counted (gpu::launch_delay), with the inputs rotated over enough copies to
// exceed the L2 cache so repeated runs do not measure the cache. Each own solver is reported as a
// ratio to the fastest cuDNN algorithm for the same problem (TF32 variants to cuDNN's TF32
// variants, the others to its fp32-accurate ones). Every cuDNN algorithm that did not run is
// counted with its reason, so a peer that ran no fast engine on a problem shows. --json writes
// one line per problem (geometry, every time, every reason) for bench/gpu_peer.py, which adds
// PyTorch's own convolution under CUDA-graph replay as a second peer. Correctness is the probe's
// and the GPU tests' job: this program only times (docs/perf.md).
// --calls N times N calls back to back in each run (their mean), as bench/gpu_peer.py times
// PyTorch's calls under CUDA-graph replay (8 and more a replay): what one call then adds to a
// stream already busy, without the ramp of a lone call after an idle GPU.
//   usage: gpu_bench --suite FILE [--batch N] [--dtype f32|f16|bf16] [--layout nchw|nhwc]
//                    [--runs N] [--calls N] [--direction fwd|bwd_data|bwd_weights] [--json FILE]
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "core/json_text.hpp"
#include "core/safe_text.hpp"
#include "gpu/check.hpp"
#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"

using namespace convguard;

namespace {

struct Buffers {
  std::vector<void*> ptrs;
  ~Buffers() {
    for (void* p : ptrs) (void)gpu::device_free(p);
  }
  void* get(std::size_t bytes) {
    void* p = nullptr;
    if (gpu::device_malloc(&p, bytes ? bytes : 1) != gpu::kSuccess) return nullptr;
    ptrs.push_back(p);
    (void)gpu::device_memset(p, 0x3c, bytes);  // ~1.0e-2 in f32, 1.0 in f16/bf16 halves: finite
    return p;
  }
};

// Two timing events, destroyed on every way out.
struct EventPair {
  gpu::Event e0{}, e1{};
  EventPair() {
    (void)gpu::event_create(&e0);
    (void)gpu::event_create(&e1);
  }
  ~EventPair() {
    (void)gpu::event_destroy(e0);
    (void)gpu::event_destroy(e1);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

constexpr double kDeclined = -1, kFailed = -2;  // time_solver's two kinds of no time

// Median device time (ms) of a call of s on p over `runs` runs of `calls` calls each, rotating
// over input copies; kDeclined where s does not take p, kFailed where a planned call failed
// (warm-up or timed; `why` says which and how).
double time_solver(const Solver& s, const Problem& p, int runs, int calls, std::string& why) {
  if (auto st = s.check(p); !st) {
    why = st.message();
    return kDeclined;
  }
  auto ws = s.workspace_bytes(p);
  auto plan = s.plan(p);
  if (!ws || !plan) {
    why = !ws ? ws.status().message() : plan.status().message();
    return -1;
  }
  const TensorDesc xd = x_desc(p), wd = w_desc(p), yd = y_desc(p);
  const std::size_t bytes = static_cast<std::size_t>((xd.span() + wd.span() + yd.span()) *
                                                     static_cast<std::int64_t>(size_of(p.dtype)));
  // Enough copies that one pass over them (~200 MB) exceeds the 50 MB L2; at most 8.
  const int copies = static_cast<int>(std::clamp<std::size_t>(
      (std::size_t{200} << 20) / std::max<std::size_t>(bytes, 1) + 1, 1, 8));
  Buffers b;
  std::vector<ConvTensors> sets;
  for (int i = 0; i < copies; ++i) {
    void* x = b.get(static_cast<std::size_t>(xd.span()) * size_of(p.dtype));
    void* w = b.get(static_cast<std::size_t>(wd.span()) * size_of(p.dtype));
    void* y = b.get(static_cast<std::size_t>(yd.span()) * size_of(p.dtype));
    if (!x || !w || !y) {
      why = "out of device memory";
      return -1;
    }
    sets.push_back({{x, xd}, {w, wd}, {y, yd}});
  }
  void* work = b.get(*ws);
  const std::span<std::byte> wspan(static_cast<std::byte*>(work), *ws);
  const EventPair ev;
  for (int i = 0; i < 3; ++i) {  // warm-up: module load, planning, clocks
    if (auto st = s.run(**plan, sets[static_cast<std::size_t>(i) % sets.size()], wspan); !st) {
      why = st.message();
      return kFailed;
    }
  }
  if (auto st = gpu::check(gpu::synchronize(), "warm-up"); !st) {
    why = st.message();
    return kFailed;
  }
  std::vector<double> t;
  Status called = Status::ok();  // the last call's status
  for (int i = 0; i < runs && called; ++i) {
    // Host overhead hidden behind it, every call's.
    (void)gpu::launch_delay(gpu::kTimingDelayUs * calls);
    (void)gpu::event_record(ev.e0);
    for (int j = 0; j < calls && called; ++j)
      called = s.run(**plan, sets[static_cast<std::size_t>(i * calls + j) % sets.size()], wspan);
    (void)gpu::event_record(ev.e1);
    (void)gpu::event_synchronize(ev.e1);
    float ms = 0;
    (void)gpu::event_elapsed_ms(&ms, ev.e0, ev.e1);
    t.push_back(ms / calls);
  }
  if (!called) {
    why = called.message();
    return kFailed;
  }
  if (auto st = gpu::check(gpu::last_error(), "timed runs"); !st) {
    why = st.message();
    return kFailed;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The fastest cuDNN solver of one group seen so far.
struct Best {
  std::string id;
  double ms = 0;
  void offer(const std::string& i, double t) {
    if (ms == 0 || t < ms) id = i, ms = t;
  }
  const char* label() const { return id.empty() ? "(none ran)" : id.c_str(); }
};

// The problem's geometry as JSON, for a peer that builds the same tensors (bench/gpu_peer.py).
nlohmann::json geometry_json(const Problem& p) {
  nlohmann::json j;
  j["problem"] = to_canonical(p);
  j["name"] = p.name;
  j["flops"] = p.flops();
  j["spatial_dims"] = p.spatial_dims;
  j["direction"] = std::string(to_string(p.direction));
  j["dtype"] = std::string(to_string(p.dtype));
  j["channels_last"] = p.x_layout == Layout::nhwc;
  j["g"] = p.g;
  j["n"] = p.n;
  j["c"] = p.c;
  j["k"] = p.k;
  const int first = first_spatial(p);
  auto list = [&](const Dims3& v) { return std::vector<std::int64_t>(v.begin() + first, v.end()); };
  j["input"] = list(p.input);
  j["output"] = list(p.output_dims());
  j["filter"] = list(p.filter);
  j["stride"] = list(p.stride);
  j["dilation"] = list(p.dilation);
  j["pad_begin"] = list(p.pad_begin);
  j["pad_end"] = list(p.pad_end);
  return j;
}

// One line under a problem: how many of cuDNN's algorithms of its direction and math (TF32 or
// not) did not run, by reason, so "graph best" is read knowing what it was chosen from.
void print_declined(const std::map<std::string, std::string>& failed, Direction d, bool tf32) {
  const std::string prefix = "cudnn:" + std::string(to_string(d)) + ":";
  std::map<std::string, int> reasons;
  int n = 0;
  for (const auto& [id, why] : failed) {
    if (id.rfind(prefix, 0) != 0 || is_tf32_variant(id) != tf32) continue;
    ++n;
    ++reasons[why.substr(0, 60)];
  }
  if (n == 0) return;
  std::string text;
  for (const auto& [why, count] : reasons)
    text += fmt::format("{}{}x {}", text.empty() ? "" : "; ", count, why);
  std::printf("  cuDNN: %d did not run: %s\n", n, text.c_str());
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string suite = arg(argc, argv, "--suite", "data/suites/resnet50.txt");
  // A whole number flag's value, or an error naming the flag (no exception out of main).
  auto whole = [&](const char* flag, const char* fallback, int lo, int hi) -> int {
    const std::string text = arg(argc, argv, flag, fallback);
    const auto v = digits_only(text, hi);
    if (!v || *v < lo) {
      std::fprintf(stderr, "gpu_bench: %s must be a whole number from %d to %d, not '%s'\n", flag,
                   lo, hi, text.c_str());
      std::exit(2);
    }
    return static_cast<int>(*v);
  };
  const int batch = whole("--batch", "0", 0, 1 << 20);
  const std::string dtype = arg(argc, argv, "--dtype", "f32");
  const std::string layout = arg(argc, argv, "--layout", "nchw");
  const std::string dir = arg(argc, argv, "--direction", "fwd");
  const int runs = whole("--runs", "50", 1, 100000);
  const int calls = whole("--calls", "1", 1, 64);
  const std::string json_path = arg(argc, argv, "--json", "");
  // --only ID[,ID...]: time these solvers alone (variant runs: the SIMT solvers take seconds); an
  // ID ending in '*' names every solver whose ID starts with what comes before it.
  const std::string only = arg(argc, argv, "--only", "");
  auto wanted = [&](const std::string& id) {
    if (only.empty()) return true;
    for (std::size_t pos = 0; pos <= only.size();) {
      const std::size_t end = std::min(only.find(',', pos), only.size());
      const std::string_view name(only.data() + pos, end - pos);
      if (name == id || (name.ends_with('*') && id.starts_with(name.substr(0, name.size() - 1))))
        return true;
      pos = end + 1;
    }
    return false;
  };
  std::ofstream json_out;
  if (!json_path.empty()) {
    json_out.open(json_path, std::ios::app);
    if (!json_out) {
      std::fprintf(stderr, "gpu_bench: --json: cannot write %s\n", json_path.c_str());
      return 2;
    }
  }
  auto dev = gpu::open_device(0);
  if (!dev) {
    std::fprintf(stderr, "gpu_bench: %s\n", dev.status().message().c_str());
    return 1;
  }
  auto problems = read_problem_file(suite);
  if (!problems) {
    std::fprintf(stderr, "gpu_bench: %s\n", problems.status().message().c_str());
    return 2;
  }
  (void)solvers_on(Device::gpu);  // loads CONVGUARD_PLUGINS
  std::string libraries;
  for (const std::string& lib : plugins::descriptions(Device::gpu)) libraries += ", " + lib;
  std::printf(
      "device %s (%s)%s; %s, batch %s, %s %s %s, median of %d runs%s\n", dev->name.c_str(),
      dev->arch.c_str(), libraries.c_str(), suite.c_str(),
      batch ? std::to_string(batch).c_str() : "as given", dtype.c_str(), layout.c_str(),
      dir.c_str(), runs,
      calls > 1 ? fmt::format(" of {} calls back to back (their mean)", calls).c_str() : "");
  std::map<std::string, std::vector<double>> ratios, legacy_ratios;
  for (Problem p : *problems) {
    if (batch > 0) p.n = batch;
    p.dtype = *parse_dtype(dtype);
    const Layout l = layout == "nhwc" ? Layout::nhwc : Layout::nchw;
    p.x_layout = p.w_layout = p.y_layout = l;
    p.direction = dir == "bwd_data"      ? Direction::backward_data
                  : dir == "bwd_weights" ? Direction::backward_weights
                                         : Direction::forward;
    std::map<std::string, double> ms;
    std::map<std::string, std::string> failed;      // cuDNN solvers that did not run: why
    std::map<std::string, std::string> own_failed;  // own solvers whose planned calls failed
    // The peer: the fastest graph-API engine (what PyTorch runs); the legacy API's best alongside.
    // TF32 variants (ids ending in ":tf32") are compared with cuDNN's TF32 variants, the rest
    // with its fp32-accurate ones: [0] plain, [1] TF32.
    Best graph[2], legacy[2];
    for (const Solver* s : solvers_on(Device::gpu)) {
      const std::string id(s->id());
      if (id == "gpu:naive" || id.rfind("gpu:chaos", 0) == 0 || !wanted(id)) continue;
      std::string why;
      const double t = time_solver(*s, p, runs, calls, why);
      if (t <= 0) {
        if (id.rfind("cudnn:", 0) == 0)
          failed[id] = why;
        else if (t == kFailed)  // an own solver that planned the problem and failed: say so
          own_failed[id] = why;
        continue;
      }
      ms[id] = t;
      if (id.rfind("cudnn:", 0) != 0) continue;
      const bool engine = id.find(":engine") != std::string::npos ||
                          id.find(":heur") != std::string::npos ||
                          id.find(":fallback") != std::string::npos;
      (engine ? graph : legacy)[is_tf32_variant(id)].offer(id, t);
    }
    const std::string name = p.name.empty() ? to_canonical(p) : p.name;
    auto tflops = [&](double t) { return t > 0 ? p.flops() / (t * 1e9) : 0.0; };
    for (int tf = 0; tf < (p.dtype == DType::f32 ? 2 : 1); ++tf) {
      std::printf(
          "\n%-30s %.1f GFLOP%s; cuDNN graph best %s %.4f ms (%.1f TFLOP/s); legacy best %s "
          "%.4f ms (%.1f TFLOP/s)\n",
          name.c_str(), p.flops() / 1e9, tf ? " TF32" : "", graph[tf].label(), graph[tf].ms,
          tflops(graph[tf].ms), legacy[tf].label(), legacy[tf].ms, tflops(legacy[tf].ms));
      print_declined(failed, p.direction, tf == 1);
      for (const auto& [id, t] : ms) {
        if (id.rfind("gpu:", 0) != 0 || is_tf32_variant(id) != (tf == 1)) continue;
        const double r = graph[tf].ms > 0 ? graph[tf].ms / t : 0;
        const double rl = legacy[tf].ms > 0 ? legacy[tf].ms / t : 0;
        if (r > 0) ratios[id].push_back(r);
        if (rl > 0) legacy_ratios[id].push_back(rl);
        std::printf("  %-28s %9.4f ms %8.1f TFLOP/s  %.3fx graph best  %.3fx legacy best\n",
                    id.c_str(), t, tflops(t), r, rl);
      }
      for (const auto& [id, why] : own_failed)
        if (is_tf32_variant(id) == (tf == 1))
          std::printf("  %-28s FAILED: %s\n", id.c_str(), why.c_str());
    }
    if (json_out) {
      nlohmann::json j = geometry_json(p);
      j["libraries"] = libraries.empty() ? "" : libraries.substr(2);
      j["ms"] = ms;
      j["declined"] = failed;
      j["failed"] = own_failed;
      j["calls"] = calls;  // calls back to back a timed run (their mean)
      // Whole rows only, each flushed: a run cut by a time limit (SIGTERM between rows) leaves
      // every finished row readable (a buffered row was cut in half once, and the next run's
      // rows were appended to it).
      json_out << json_text(j) << "\n" << std::flush;
    }
  }
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double r : v) s += std::log(r);
    return v.empty() ? 0.0 : std::exp(s / static_cast<double>(v.size()));
  };
  std::printf(
      "\ngeomean ratio to cuDNN (higher is better): vs the best graph-API engine | vs the best "
      "legacy algorithm\n");
  for (const auto& [id, v] : ratios) {
    std::printf("  %-28s %.3fx over %zu problems | %.3fx over %zu\n", id.c_str(), geomean(v),
                v.size(), geomean(legacy_ratios[id]), legacy_ratios[id].size());
  }
  return 0;
}
