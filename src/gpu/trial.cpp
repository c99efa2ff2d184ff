// The GPU trial (gpu/gpu.hpp): host test data copied to device buffers, the solver run and timed
// with device events, its output copied back and verified on the host.
#include <chrono>
#include <memory>

#include "gpu/check.hpp"
#include "gpu/gpu.hpp"

namespace convguard::gpu {
namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// A device allocation freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p) (void)device_free(p);
  }
  Status allocate(std::size_t bytes, const char* what) {
    return check(device_malloc(&p, bytes ? bytes : 1), what);
  }
};

struct Events {
  Event a = nullptr, b = nullptr;
  ~Events() {
    if (a) (void)event_destroy(a);
    if (b) (void)event_destroy(b);
  }
};

}  // namespace

TrialResult run_trial(const Solver& s, const Problem& p, TrialTensors& host,
                      const TrialOptions& o) {
  TrialResult r;
  auto fail = [&r](Status st) {
    r.status = std::move(st);
    return r;
  };
  if (auto st = s.check(p); !st) return fail(st);
  auto ws = s.workspace_bytes(p);
  if (!ws) return fail(ws.status());
  r.workspace_bytes = *ws;
  DeviceBuffer x, w, y, work;
  if (auto st = x.allocate(host.x.bytes(), "x"); !st) return fail(st);
  if (auto st = w.allocate(host.w.bytes(), "w"); !st) return fail(st);
  if (auto st = y.allocate(host.y.bytes(), "y"); !st) return fail(st);
  if (auto st = work.allocate(*ws, "workspace"); !st) return fail(st);
  const ConvTensors dev{
      {x.p, host.x.view().desc}, {w.p, host.w.view().desc}, {y.p, host.y.view().desc}};
  // Inputs over, output poisoned: all-ones bytes are NaN in f32, f16 and bf16.
  struct Pair {
    DeviceBuffer& d;
    HostTensor& h;
    bool written;
  };
  for (const Pair& t : {Pair{x, host.x, p.writes_x()}, Pair{w, host.w, p.writes_w()},
                        Pair{y, host.y, p.writes_y()}}) {
    const Status st = t.written ? check(device_memset(t.d.p, 0xff, t.h.bytes()), "poison output")
                                : check(copy_to_device(t.d.p, t.h.data(), t.h.bytes()), "copy in");
    if (!st) return fail(st);
  }
  const std::span<std::byte> wspan(static_cast<std::byte*>(work.p), *ws);
  const double t0 = now_ms();
  auto plan = s.plan(p);
  if (!plan) return fail(plan.status());
  if (auto st = s.run(**plan, dev, wspan); !st) return fail(st);
  if (auto st = check(synchronize(), "first run"); !st) return fail(st);
  r.first_ms = now_ms() - t0;
  if (o.on_first_run) o.on_first_run(r.first_ms);
  HostTensor& out = p.writes_x() ? host.x : p.writes_w() ? host.w : host.y;
  const void* out_dev = p.writes_x() ? x.p : p.writes_w() ? w.p : y.p;
  if (auto st = check(copy_to_host(out.data(), out_dev, out.bytes()), "copy out"); !st)
    return fail(st);
  if (o.verify) {
    if (auto st = verify_output(s, p, host, o, r); !st) return fail(st);
  }
  if (o.time) {
    Events ev;
    if (auto st = check(event_create(&ev.a), "event"); !st) return fail(st);
    if (auto st = check(event_create(&ev.b), "event"); !st) return fail(st);
    auto once = [&]() -> Result<double> {
      if (auto st = check(event_record(ev.a), "event record"); !st) return st;
      if (auto st = s.run(**plan, dev, wspan); !st) return st;
      if (auto st = check(event_record(ev.b), "event record"); !st) return st;
      if (auto st = check(event_synchronize(ev.b), "timed run"); !st) return st;
      float ms = 0;
      if (auto st = check(event_elapsed_ms(&ms, ev.a, ev.b), "event time"); !st) return st;
      return static_cast<double>(ms);
    };
    if (auto st = time_runs(once, o, r); !st) return fail(st);
  }
  return r;
}

}  // namespace convguard::gpu
