#include "convguard/context.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "backends/device_memory.hpp"
#include "convguard/registry.hpp"
#include "core/host_buffer.hpp"
#include "db/select.hpp"
#include "probe/device.hpp"
#include "probe/sweep.hpp"
#include "probe/workarounds.hpp"

namespace convguard {
namespace {

// The chosen solver, its plan and its workspace: host memory, or the device's for GPU and
// plugin-device solvers (allocated on the first run, kept for the next).
class ChosenPlan final : public ConvPlan {
 public:
  ChosenPlan(const Solver& s, std::unique_ptr<convguard::Plan> p, std::size_t ws, std::string why,
             std::unique_ptr<detail::DeviceMemory> mem)
      : solver_(s), plan_(std::move(p)), why_(std::move(why)), ws_(ws), mem_(std::move(mem)) {}
  ~ChosenPlan() override {
    if (!buffer_) return;
    if (mem_)
      mem_->release(buffer_);
    else
      std::free(buffer_);
  }
  std::string_view solver_id() const override { return solver_.id(); }
  const std::string& why() const override { return why_; }
  std::size_t workspace_bytes() const override { return ws_; }
  Status run(const ConvTensors& t) override {
    if (ws_ > 0 && !buffer_) {
      if (mem_) {
        if (auto st = mem_->allocate(&buffer_, ws_, "workspace"); !st) return st;
      } else {
        buffer_ = allocate_host_buffer(ws_);
        if (!buffer_)
          return {StatusCode::out_of_memory, "workspace of " + std::to_string(ws_) + " bytes"};
      }
    }
    return solver_.run(*plan_, t, std::span<std::byte>(static_cast<std::byte*>(buffer_), ws_));
  }

 private:
  const Solver& solver_;
  std::unique_ptr<convguard::Plan> plan_;
  std::string why_;
  std::size_t ws_;
  std::unique_ptr<detail::DeviceMemory> mem_;  // null: host memory
  void* buffer_ = nullptr;
};

// The worker binary: the option, $CONVGUARD_WORKER, this build's convguard, `convguard` on PATH.
std::string find_worker(const std::string& given) {
  namespace fs = std::filesystem;
  if (!given.empty()) return given;
  if (const char* e = std::getenv("CONVGUARD_WORKER"); e && *e) return e;
  if (fs::exists(CONVGUARD_CLI_PATH)) return CONVGUARD_CLI_PATH;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      const fs::path candidate = fs::path(dir) / "convguard";
      if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return {};
}

class Ctx final : public Context {
 public:
  Ctx(std::unique_ptr<db::Store> store, probe::DeviceInfo dev, ContextOptions o)
      : store_(std::move(store)), dev_(std::move(dev)), o_(std::move(o)) {}
  const std::string& device_description() const override { return dev_.description; }
  Result<std::unique_ptr<ConvPlan>> plan(const Problem& p) override {
    const db::SelectPolicy policy{dev_.kind, dev_.plugin_kind, o_.allow_tf32, o_.verified_only};
    auto sel = db::select_solver(*store_, dev_.fingerprint, p, policy);
    std::string probed;
    // Probe when nothing is known, or (verified only) when nothing known verifies: the sweep
    // reuses what is recorded and runs the rest, then workarounds.
    const bool unknown =
        sel ? sel->evidence == 0 : sel.status().code() == StatusCode::not_applicable;
    if (o_.probe_unknown && unknown) {
      probed = probe(p, policy);
      sel = db::select_solver(*store_, dev_.fingerprint, p, policy);
    }
    if (!sel) {
      if (probed.empty()) return sel.status();
      return Status{sel.status().code(), probed + sel.status().message()};
    }
    const Solver& s = *sel->solver;
    if (auto st = s.check(p); !st) return st;
    auto ws = s.workspace_bytes(p);
    if (!ws) return ws.status();
    auto plan = s.plan(p);
    if (!plan) return plan.status();
    return std::unique_ptr<ConvPlan>(
        new ChosenPlan(s, std::move(*plan), *ws, probed + sel->why,
                       device_memory_for(dev_.kind, dev_.plugin_kind)));
  }

 private:
  // Probes one problem in the sandbox: its solvers (all, or in list order up to the first that
  // verifies), then, when none verified, workarounds around the ones that failed. Returns what to
  // put in front of why().
  std::string probe(const Problem& p, const db::SelectPolicy& policy) {
    const std::string worker = find_worker(o_.worker);
    if (worker.empty())
      return "not probed (no convguard binary for the worker: set CONVGUARD_WORKER); ";
    if (auto st = store_->lock_for_writing(); !st) return "not probed (" + st.message() + "); ";
    if (auto rec = store_->recover_running(); !rec) {
      store_->unlock();
      return "not probed (" + rec.status().message() + "); ";
    }
    probe::SweepConfig c;
    c.problems = {p};
    for (const Solver* s : solvers_on(policy.device)) {
      if (s->plugin_device() == policy.plugin_kind && !skipped_by_environment(s->id()) &&
          (policy.allow_tf32 || !is_tf32_variant(s->id())))
        c.solvers.emplace_back(s->id());
    }
    c.device = o_.device;
    c.worker_exe = worker;
    c.timeout_s = o_.trial_timeout_s;
    // Plans run in this process with its OpenMP thread count (a host program's, or PyTorch's
    // torch.set_num_threads): the trials measure with the same, and the device fingerprint (which
    // names the thread count) is then this process's, so the evidence is found again.
    if (policy.device == Device::cpu) c.threads = omp_get_max_threads();
    probe::set_slow_factor(c, std::nullopt);  // the probe command's default
    c.stop_at_first_ok = o_.probe_until_first_ok;
    auto sum = probe::run_sweep(c, *store_, {});
    std::string said;
    double wall = 0;
    int ran = 0;
    if (sum) {
      wall = sum->wall_s;
      for (const auto& [what, count] : sum->counts)
        if (what != "reused" && what != "known bad" && what != "not needed" && what != "skipped")
          ran += count;
      probe::SweepConfig w = c;
      w.stop_at_first_ok = true;
      w.solvers = probe::workaround_candidates(p, c.solvers, *store_, dev_.fingerprint,
                                               probe::WorkaroundMode::automatic);
      if (!w.solvers.empty() && !sum->interrupted) {
        auto wsum = probe::run_sweep(w, *store_, {});
        if (wsum) {
          wall += wsum->wall_s;
          said = fmt::format(", then up to {} workaround(s)", w.solvers.size());
        } else {
          sum = wsum;
        }
      }
    }
    store_->unlock();
    if (!sum) return "probe failed (" + sum.status().message() + "); ";
    return fmt::format("probed now: {} trial(s) of {} solver(s){} in {:.2f} s; ", ran,
                       c.solvers.size(), said, wall);
  }

  std::unique_ptr<db::Store> store_;
  probe::DeviceInfo dev_;
  ContextOptions o_;
};

}  // namespace

Result<std::unique_ptr<Context>> Context::open(const ContextOptions& o) {
  auto dev = probe::open_device(o.device);
  if (!dev) return dev.status();
  auto store = db::Store::open(o.db_path.empty() ? db::default_path() : o.db_path);
  if (!store) return store.status();
  return std::unique_ptr<Context>(new Ctx(std::move(*store), std::move(*dev), o));
}

}  // namespace convguard
