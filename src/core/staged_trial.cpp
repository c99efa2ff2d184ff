#include "core/staged_trial.hpp"

#include <chrono>

namespace convguard::detail {
namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// A device allocation freed on scope exit.
struct Buffer {
  DeviceMemory& mem;
  void* p = nullptr;
  explicit Buffer(DeviceMemory& m) : mem(m) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (p) mem.release(p);
  }
  Status allocate(std::size_t bytes, const char* what) {
    return mem.allocate(&p, bytes ? bytes : 1, what);
  }
};

}  // namespace

Result<double> DeviceMemory::time_once(const std::function<Status()>& run) {
  const double t0 = now_ms();
  if (auto st = run(); !st) return st;
  if (auto st = synchronize("timed run"); !st) return st;
  return now_ms() - t0;
}

TrialResult run_staged_trial(const Solver& s, const Problem& p, TrialTensors& host,
                             const TrialOptions& o, DeviceMemory& mem) {
  TrialResult r;
  auto fail = [&r](Status st) {
    r.status = std::move(st);
    return r;
  };
  if (auto st = s.check(p); !st) return fail(st);
  auto ws = s.workspace_bytes(p);
  if (!ws) return fail(ws.status());
  r.workspace_bytes = *ws;
  Buffer x(mem), w(mem), y(mem), work(mem);
  if (auto st = x.allocate(host.x.bytes(), "x"); !st) return fail(st);
  if (auto st = w.allocate(host.w.bytes(), "w"); !st) return fail(st);
  if (auto st = y.allocate(host.y.bytes(), "y"); !st) return fail(st);
  if (auto st = work.allocate(*ws, "workspace"); !st) return fail(st);
  const ConvTensors dev{
      {x.p, host.x.view().desc}, {w.p, host.w.view().desc}, {y.p, host.y.view().desc}};
  // Inputs over, output poisoned.
  struct Pair {
    Buffer& d;
    HostTensor& h;
    bool written;
  };
  for (const Pair& t : {Pair{x, host.x, p.writes_x()}, Pair{w, host.w, p.writes_w()},
                        Pair{y, host.y, p.writes_y()}}) {
    const Status st =
        t.written ? mem.poison(t.d.p, t.h.bytes()) : mem.copy_in(t.d.p, t.h.data(), t.h.bytes());
    if (!st) return fail(st);
  }
  const std::span<std::byte> wspan(static_cast<std::byte*>(work.p), *ws);
  const double t0 = now_ms();
  auto plan = s.plan(p);
  if (!plan) return fail(plan.status());
  if (auto st = s.run(**plan, dev, wspan); !st) return fail(st);
  if (auto st = mem.synchronize("first run"); !st) return fail(st);
  r.first_ms = now_ms() - t0;
  if (o.on_first_run) o.on_first_run(r.first_ms);
  HostTensor& out = p.writes_x() ? host.x : p.writes_w() ? host.w : host.y;
  const void* out_dev = p.writes_x() ? x.p : p.writes_w() ? w.p : y.p;
  if (auto st = mem.copy_out(out.data(), out_dev, out.bytes()); !st) return fail(st);
  if (o.verify) {
    if (auto st = verify_output(s, p, host, o, r); !st) return fail(st);
  }
  if (o.time) {
    auto once = [&]() { return mem.time_once([&] { return s.run(**plan, dev, wspan); }); };
    if (auto st = time_runs(once, o, r); !st) return fail(st);
  }
  return r;
}

}  // namespace convguard::detail
