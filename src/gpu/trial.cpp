// The GPU trial (gpu/gpu.hpp): core/staged_trial.cpp with the CUDA/HIP runtime's memory calls
// and device-event timing; gpu:naive is the device reference.
#include <algorithm>
#include <chrono>

#include "core/staged_trial.hpp"
#include "gpu/check.hpp"
#include "gpu/gpu.hpp"

namespace convguard::gpu {
namespace {

struct Events {
  Event a = nullptr, b = nullptr;
  ~Events() {
    if (a) (void)event_destroy(a);
    if (b) (void)event_destroy(b);
  }
};

class RuntimeMemory final : public detail::DeviceMemory {
 public:
  Status allocate(void** p, std::size_t bytes, const char* what) override {
    return check(device_malloc(p, bytes), what);
  }
  void release(void* p) override { (void)device_free(p); }
  Status copy_in(void* d, const void* h, std::size_t bytes) override {
    return check(copy_to_device(d, h, bytes), "copy in");
  }
  Status copy_out(void* h, const void* d, std::size_t bytes) override {
    return check(copy_to_host(h, d, bytes), "copy out");
  }
  Status poison(void* d, std::size_t bytes) override {
    return check(device_memset(d, 0xff, bytes), "poison output");
  }
  Status synchronize(const char* what) override { return check(gpu::synchronize(), what); }
  // Device events behind a short GPU-side delay measure the kernels alone; a call also costs the
  // host time run() takes to enqueue them. Back to back, a call cannot be faster than either, so
  // the measurement is the larger: cuDNN 9's legacy API spent 55 us of host time per call on a
  // layer whose kernel took 12 us (docs/perf.md), and must not be chosen for that layer.
  Result<double> time_once(const std::function<Status()>& run) override {
    if (!ev_.a) {
      if (auto st = check(event_create(&ev_.a), "event"); !st) return st;
      if (auto st = check(event_create(&ev_.b), "event"); !st) return st;
    }
    if (auto st = launch_delay(kTimingDelayUs); !st) return st;
    if (auto st = check(event_record(ev_.a), "event record"); !st) return st;
    const auto h0 = std::chrono::steady_clock::now();
    if (auto st = run(); !st) return st;
    const double host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
    if (auto st = check(event_record(ev_.b), "event record"); !st) return st;
    if (auto st = check(event_synchronize(ev_.b), "timed run"); !st) return st;
    float ms = 0;
    if (auto st = check(event_elapsed_ms(&ms, ev_.a, ev_.b), "event time"); !st) return st;
    return std::max(static_cast<double>(ms), host_ms);
  }

 private:
  Events ev_;
};

}  // namespace

std::unique_ptr<detail::DeviceMemory> device_memory() {
  return std::make_unique<RuntimeMemory>();
}

TrialResult run_trial(const Solver& s, const Problem& p, TrialTensors& host,
                      const TrialOptions& o) {
  RuntimeMemory mem;
  return detail::run_staged_trial(s, p, host, o, mem, &reference_solver());
}

}  // namespace convguard::gpu
