#include "probe/worker.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/memory.hpp"
#include "convguard/reference.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "core/json_text.hpp"
#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"
#include "probe/device.hpp"

namespace convguard::probe {
namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Peak resident memory of this trial alone: Linux resets the high-water mark (VmHWM) when "5"
// is written to /proc/self/clear_refs, so each trial's figure excludes the ones before it.
void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

std::uint64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// A cheap fingerprint of a tensor's bytes, to notice a solver that wrote to its inputs. Hashed
// in 1 MiB chunks, four independent FNV-1a lanes per chunk and chunks in parallel: one serial
// chain over the 1 GiB input of the seed-003 problem took a noticeable share of its trials.
// Small tensors (under 16 MiB) stay on this thread: waking a 32-thread team three times a
// trial cost milliseconds per trial on a 32-vCPU GPU host, most of whose trials are declined.
std::uint64_t content_hash(const HostTensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data());
  const std::size_t bytes = t.bytes(), chunk = std::size_t{1} << 20;
  const auto chunks = static_cast<std::int64_t>((bytes + chunk - 1) / chunk);
  std::vector<std::uint64_t> part(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static) if (chunks >= 16)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * chunk;
    const std::size_t end = std::min(bytes, begin + chunk);
    std::uint64_t h[4] = {1469598103934665603ull, 2, 3, 4};
    std::size_t i = begin;
    for (; i + 32 <= end; i += 32) {
      for (int l = 0; l < 4; ++l) {
        std::uint64_t w;
        std::memcpy(&w, p + i + 8 * l, 8);
        h[l] = (h[l] ^ w) * 1099511628211ull;
      }
    }
    for (; i < end; ++i) h[0] = (h[0] ^ p[i]) * 1099511628211ull;
    part[static_cast<std::size_t>(c)] = ((h[0] * 31 + h[1]) * 31 + h[2]) * 31 + h[3];
  }
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint64_t v : part) h = (h ^ v) * 1099511628211ull;
  return h;
}

std::uint64_t inputs_hash(const Problem& p, const TrialTensors& t) {
  std::uint64_t h = 0;
  if (!p.writes_x()) h ^= content_hash(t.x);
  if (!p.writes_w()) h ^= content_hash(t.w) * 3;
  if (!p.writes_y()) h ^= content_hash(t.y) * 7;
  return h;
}

// Options of a throughput measurement: timed runs only, no verification.
TrialOptions timing_only(int iterations) {
  TrialOptions o;
  o.verify = false;
  o.time = true;
  o.iterations = iterations;
  return o;
}

// Throughput of this worker on a small direct convolution: the unit of the parent's deadlines.
double measure_gflops() {
  const Solver* s = find_solver("cpu:direct");
  auto p = parse_problem("mb2ic32ih28oc32oh28kh3ph1");
  if (!s || !p) return 10.0;
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  const TrialOptions o = timing_only(5);
  const TrialResult r = run_trial(*s, *p, t, o);
  return r.ran() && r.min_ms > 0 ? p->flops() / (r.min_ms * 1e6) : 10.0;
}

// Throughput of the fp64 reference (cpu:ref and full verification cost this much).
double measure_reference_gflops() {
  auto p = parse_problem("mb1ic16ih16oc16oh16kh3ph1");
  if (!p) return 0.5;
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  const double a = now_ms();
  auto r = reference_output(*p, t.view());
  const double ms = now_ms() - a;
  return r && ms > 0 ? p->flops() / (ms * 1e6) : 0.5;
}

// Throughput of the per-point reference (sampled verification of large problems costs this).
double measure_sample_gflops() {
  auto p = parse_problem("mb4ic64ih16oc16oh16kh3ph1");
  if (!p) return 0.2;
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  TrialOptions o;
  const std::int64_t points = std::min<std::int64_t>(o.samples, y_desc(*p).elements());
  const double a = now_ms();
  double sink = 0;
  for (std::int64_t i = 0; i < points; ++i) sink += reference_at(*p, t.view(), i);
  const double ms = now_ms() - a;
  const double flops = 2.0 * static_cast<double>(points * p->reduction_length());
  return ms > 0 && sink == sink ? flops / (ms * 1e6) : 0.2;
}

// Which device this worker drives (its --device).
Device g_device = Device::cpu;
std::string g_plugin_device;  // Device::plugin: the plugin device kind ("hip")

std::string device_kind(Device d, std::string_view plugin_device) {
  switch (d) {
    case Device::gpu:
      return "a GPU";
    case Device::plugin:
      return "a " + std::string(plugin_device) + " device";
    case Device::cpu:
      break;
  }
  return "the CPU";
}

// Throughput of gpu:implicit_gemm on a ResNet-like layer: the unit of GPU deadlines.
double measure_gpu_gflops() {
  const Solver* s = find_solver("gpu:implicit_gemm");
  auto p = parse_problem("mb8ic64ih56oc64oh56kh3ph1");
  if (!s || !p) return 1000.0;
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  const TrialOptions o = timing_only(5);
  const TrialResult r = gpu::run_trial(*s, *p, t, o);
  return r.ran() && r.min_ms > 0 ? p->flops() / (r.min_ms * 1e6) : 1000.0;
}

// Throughput of a plugin device: its naive solver (by convention the device's reference, like
// gpu:naive; the one least likely to hang at start-up) on a small forward layer. Without one,
// 1 GFLOP/s: deadlines err long, never short.
double measure_plugin_gflops(const std::string& kind) {
  auto p = parse_problem("mb2ic32ih28oc32oh28kh3ph1");
  if (!p) return 1.0;
  TrialTensors t(*p);
  fill_inputs(*p, t, 1, FillMode::uniform);
  const TrialOptions o = timing_only(3);
  for (const Solver* s : all_solvers()) {
    if (s->device() != Device::plugin || s->plugin_device() != kind) continue;
    if (s->id().find("Naive") == std::string_view::npos || !s->check(*p)) continue;
    const TrialResult r = plugins::run_plugin_trial(*s, *p, t, o);
    if (r.ran() && r.min_ms > 0) return p->flops() / (r.min_ms * 1e6);
    if (r.status.code() == StatusCode::device_error) break;
  }
  return 1.0;
}

// A CPU worker runs under RLIMIT_AS: the memory limit plus room for code, thread stacks and
// allocator arenas, so a runaway allocation fails (status oom) instead of taking the machine.
// GPU and plugin workers are left alone: CUDA and HIP reserve far more address space than they use.
void limit_address_space() {
  constexpr std::int64_t kSlack = std::int64_t{16} << 30;
  std::int64_t cap;
  if (__builtin_add_overflow(host_memory_limit(), kSlack, &cap)) return;
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0) return;
  if (r.rlim_max != RLIM_INFINITY && static_cast<std::int64_t>(r.rlim_max) < cap) return;
  r.rlim_cur = static_cast<rlim_t>(cap);
  (void)setrlimit(RLIMIT_AS, &r);
}

// The sequence number of the request being served: its progress line and reply carry it.
std::uint64_t g_seq = 0;

// The test data of the last problem, kept between trials: every solver of one problem is
// verified against the same fp64 reference, computed once.
struct Cache {
  std::string problem;
  std::uint64_t seed = 0;
  std::unique_ptr<TrialTensors> tensors;
  std::uint64_t hash = 0;
};

}  // namespace

namespace {
Cache cache;

void progress(const char* what, double compile_ms = -1) {
  nlohmann::json j{{"seq", g_seq}, {"progress", what}};
  if (compile_ms >= 0) j["compile_ms"] = compile_ms;
  (void)write_line(kReplyFd, json_text(j));
}

// A plugin solver's compile step (plugin.h prepare(): MIOpen's *CompileSolution) before the
// trial: the parent gives it the compile deadline between these progress lines and starts the
// trial's deadline after them, so a slow first compile is never recorded as a hang. False (rep
// filled) when compiling failed; a solver that does not apply goes on to be recorded unsupported.
bool compile_step(const Solver& s, const Problem& p, TrialReply& rep) {
  progress("compiling");
  const double t0 = now_ms();
  const auto st = plugins::prepare_plugin_solver(s, p);
  rep.compile_ms = st ? now_ms() - t0 : 0;
  progress("compiled", rep.compile_ms);
  if (!st || st->is_ok() || st->code() == StatusCode::not_applicable) return true;
  rep.status = st->code() == StatusCode::device_error    ? "crash"
               : st->code() == StatusCode::out_of_memory ? "oom"
                                                         : "error";
  rep.fatal = st->code() == StatusCode::device_error;
  rep.reason = "compile step: " + st->message();
  return false;
}

TrialReply run_request_unguarded(const TrialRequest& req) {
  TrialReply rep;
  auto p = parse_problem(req.problem);
  if (!p) {
    rep.status = "error";
    rep.reason = "problem: " + p.status().message();
    return rep;
  }
  const Solver* s = find_solver(req.solver);
  if (!s) {
    rep.status = "error";
    rep.reason = "no solver '" + req.solver + "' in this worker (plugin not loaded?)";
    return rep;
  }
  reset_peak_rss();
  if (!cache.tensors || cache.problem != req.problem || cache.seed != req.seed) {
    cache.tensors.reset();  // free the old tensors before allocating new ones
    TrialOptions need;
    need.verify = req.verify;
    if (auto st = check_host_memory(*p, need); !st) {
      rep.status = "oom";
      rep.reason = st.message();
      return rep;
    }
    cache.tensors = std::make_unique<TrialTensors>(*p);
    fill_inputs(*p, *cache.tensors, req.seed, FillMode::uniform);
    cache.problem = req.problem;
    cache.seed = req.seed;
    cache.hash = inputs_hash(*p, *cache.tensors);
  }
  TrialTensors& t = *cache.tensors;
  TrialOptions o;
  o.verify = req.verify;
  o.time = true;
  o.iterations = req.max_runs;
  o.max_time_ms = req.max_time_ms;
  o.stable_within = 0.05;
  o.seed = req.seed;
  o.on_plan = [] { progress("planning"); };
  o.on_first_run = [](double first_ms) {
    (void)write_line(kReplyFd,
                     json_text(nlohmann::json{
                         {"seq", g_seq}, {"progress", "first_run"}, {"first_ms", first_ms}}));
  };
  if (s->device() != g_device || s->plugin_device() != g_plugin_device) {
    rep.status = "unsupported";
    rep.reason = "runs on " + device_kind(s->device(), s->plugin_device()) +
                 "; this worker drives " + device_kind(g_device, g_plugin_device);
    return rep;
  }
  if (s->device() == Device::plugin) {
    if (!compile_step(*s, *p, rep)) return rep;
  }
  const TrialResult r = run_trial_on_device(*s, *p, t, o);
  rep.workspace_bytes = r.workspace_bytes;
  rep.peak_rss_bytes = peak_rss_bytes();
  // A solver that wrote to its inputs is wrong whatever its output, and the cached data is no
  // longer the seed's: regenerate it for the next trial. One that check() declined never had
  // them (most of a sweep's trials: hashing 1 GiB of seed-003 input after each was seconds).
  if (!r.declined && inputs_hash(*p, t) != cache.hash) {
    cache.tensors.reset();
    if (r.ran()) {
      rep.status = "wrong";
      rep.reason = "the solver modified its input tensors";
      return rep;
    }
  }
  if (!r.ran()) {
    switch (r.status.code()) {
      case StatusCode::not_applicable:
        rep.status = "unsupported";
        break;
      case StatusCode::out_of_memory:
        rep.status = "oom";
        break;
      case StatusCode::device_error:
        rep.status = "crash";
        rep.fatal = true;
        break;
      default:
        rep.status = "error";
    }
    rep.reason = r.status.message() + (rep.fatal ? " (device context lost: worker replaced)" : "");
    return rep;
  }
  rep.first_ms = r.first_ms;
  rep.median_ms = r.median_ms;
  rep.min_ms = r.min_ms;
  rep.runs = r.iterations;
  if (r.verdict) {
    rep.rel_error = r.verdict->rel_error;
    rep.max_abs_error = r.verdict->max_abs_error;
    rep.tolerance = r.verdict->tolerance;
    rep.sampled = r.verdict->sampled;
    if (!r.verdict->ok) {
      rep.status = "wrong";
      rep.reason = r.verdict->message + (r.note.empty() ? "" : " [" + r.note + "]");
      return rep;
    }
  }
  rep.status = "ok";
  rep.reason = r.note;  // how the solver was found applicable, where its plugin says
  return rep;
}
}  // namespace

TrialReply run_request(const TrialRequest& req) {
  try {
    return run_request_unguarded(req);
  } catch (const std::bad_alloc&) {
    // Under the worker's address-space limit an allocation anywhere (tensors, a solver's buffers,
    // the reference) can fail: that is the trial's status, never a crash blamed on the solver.
    cache = Cache{};
    TrialReply rep;
    rep.status = "oom";
    rep.reason = fmt::format("an allocation failed (the worker's memory limit is {:.3g} GiB)",
                             static_cast<double>(host_memory_limit()) / (1 << 30));
    return rep;
  }
}

int worker_main(int argc, char** argv) {
  // The protocol's descriptors come from the parent (pool.cpp). Checked first, and kept out of
  // anything this process execs (MIOpen runs compilers); stdout goes to stderr before any plugin
  // loads, so nothing a solver or library prints can reach the parent as a reply.
  if (::fcntl(kRequestFd, F_GETFD) < 0 || ::fcntl(kReplyFd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "convguard worker: started without the protocol's descriptors 3 and 4; the "
                 "probe starts workers itself\n");
    return 2;
  }
  (void)::fcntl(kRequestFd, F_SETFD, FD_CLOEXEC);
  (void)::fcntl(kReplyFd, F_SETFD, FD_CLOEXEC);
  std::fflush(stdout);
  (void)::dup2(2, 1);
  const std::string device = argc > 3 && std::string(argv[2]) == "--device" ? argv[3] : "cpu";
  (void)all_solvers();  // load plugins (CONVGUARD_PLUGINS) before saying ready
  auto opened = open_device(device);
  if (!opened) {
    std::cerr << "convguard worker: " << opened.status().message() << "\n";
    return 2;
  }
  const DeviceInfo dev = *opened;
  if (dev.kind == Device::cpu) limit_address_space();
  g_device = dev.kind;
  g_plugin_device = dev.plugin_kind;
  const double gflops = dev.kind == Device::cpu   ? measure_gflops()
                        : dev.kind == Device::gpu ? measure_gpu_gflops()
                                                  : measure_plugin_gflops(g_plugin_device);
  const double ref_gflops = measure_reference_gflops();
  const double sample_gflops = measure_sample_gflops();
  if (!write_line(kReplyFd, json_text(nlohmann::json{{"ready", true},
                                                     {"pid", getpid()},
                                                     {"gflops", gflops},
                                                     {"ref_gflops", ref_gflops},
                                                     {"sample_gflops", sample_gflops},
                                                     {"fingerprint", dev.fingerprint},
                                                     {"description", dev.description}})))
    return 0;
  std::string buf, line;
  while (read_line(kRequestFd, buf, line)) {
    if (line.empty()) continue;
    auto req = decode_request(line);
    TrialReply rep;
    if (!req) {
      rep.status = "error";
      rep.reason = req.status().message();
    } else {
      g_seq = req->seq;
      rep = run_request(*req);
    }
    rep.seq = g_seq;
    if (!write_line(kReplyFd, encode(rep))) break;
  }
  return 0;
}

}  // namespace convguard::probe
