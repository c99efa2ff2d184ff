#include "core/staged_trial.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "convguard/reference.hpp"
#include "convguard/verify.hpp"

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

// The device reference's output for the inputs already on the device (dev), in dense logical
// order: its own output buffer, so the solver under test's is untouched.
Result<std::vector<double>> device_reference_output(const Solver& ref, const Problem& p,
                                                    ConvTensors dev, const TensorDesc& out_desc,
                                                    DeviceMemory& mem) {
  if (auto st = ref.check(p); !st) return st;
  HostTensor out(out_desc);
  Buffer buf(mem);
  if (auto st = buf.allocate(out.bytes(), "device reference output"); !st) return st;
  if (auto st = mem.poison(buf.p, out.bytes()); !st) return st;
  (p.writes_x() ? dev.x : p.writes_w() ? dev.w : dev.y).data = buf.p;
  auto plan = ref.plan(p);
  if (!plan) return plan.status();
  if (auto st = ref.run(**plan, dev, {}); !st) return st;
  if (auto st = mem.synchronize("device reference"); !st) return st;
  if (auto st = mem.copy_out(out.data(), buf.p, out.bytes()); !st) return st;
  return to_dense_f64(out.view());
}

// Both checks must pass: the sampled fp64 points and the full comparison with the device
// reference (whose own rounding to the storage type is one more rounding in the tolerance).
Verdict combine(Verdict sampled, Verdict full, std::string_view ref_id) {
  if (!full.ok) {
    full.message = "against " + std::string(ref_id) + " (every element): " + full.message;
    return full;
  }
  if (!sampled.ok) return sampled;
  full.rel_error = std::max(full.rel_error, sampled.rel_error);
  full.max_abs_error = std::max(full.max_abs_error, sampled.max_abs_error);
  return full;
}

}  // namespace

Result<double> DeviceMemory::time_once(const std::function<Status()>& run) {
  const double t0 = now_ms();
  if (auto st = run(); !st) return st;
  if (auto st = synchronize("timed run"); !st) return st;
  return now_ms() - t0;
}

TrialResult run_staged_trial(const Solver& s, const Problem& p, TrialTensors& host,
                             const TrialOptions& o, DeviceMemory& mem,
                             const Solver* device_reference) {
  TrialResult r;
  auto fail = [&r](Status st) {
    r.status = std::move(st);
    return r;
  };
  if (auto st = s.check(p); !st) {
    r.declined = true;
    return fail(st);
  } else {
    r.note = st.message();
  }
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
  HostTensor& out = p.writes_x() ? host.x : p.writes_w() ? host.w : host.y;
  // Before the solver under test runs, so a solver that writes into its inputs cannot skew it.
  const bool full_on_device = o.verify && device_reference && device_reference != &s &&
                              p.flops() / 2 > o.full_reference_limit;
  if (full_on_device && !host.device_reference) {
    auto ref = device_reference_output(*device_reference, p, dev, out.view().desc, mem);
    if (!ref) {
      return fail({ref.status().code(), std::string(device_reference->id()) +
                                            " (device reference): " + ref.status().message()});
    }
    host.device_reference = std::move(*ref);
  }
  if (o.on_plan) o.on_plan();
  const double t0 = now_ms();
  auto plan = s.plan(p);
  if (!plan) return fail(plan.status());
  if (auto st = s.run(**plan, dev, wspan); !st) return fail(st);
  if (auto st = mem.synchronize("first run"); !st) return fail(st);
  r.first_ms = now_ms() - t0;
  if (o.on_first_run) o.on_first_run(r.first_ms);
  const void* out_dev = p.writes_x() ? x.p : p.writes_w() ? w.p : y.p;
  if (auto st = mem.copy_out(out.data(), out_dev, out.bytes()); !st) return fail(st);
  if (o.verify) {
    if (auto st = verify_output(s, p, host, o, r); !st) return fail(st);
    if (full_on_device) {
      Accuracy acc = s.accuracy(p);
      acc.result_roundings += 1;
      r.verdict = combine(*r.verdict, compare(p, out.view(), *host.device_reference, acc, o.fill),
                          device_reference->id());
    }
  }
  if (o.time) {
    auto once = [&]() { return mem.time_once([&] { return s.run(**plan, dev, wspan); }); };
    if (auto st = time_runs(once, o, r); !st) return fail(st);
  }
  return r;
}

}  // namespace convguard::detail
