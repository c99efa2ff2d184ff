#include "convguard/context.hpp"

#include <cstdlib>

#include "db/select.hpp"
#include "probe/device.hpp"

namespace convguard {
namespace {

class ChosenPlan final : public ConvPlan {
 public:
  ChosenPlan(const Solver& s, std::unique_ptr<convguard::Plan> p, std::size_t ws, std::string why)
      : solver_(s), plan_(std::move(p)), why_(std::move(why)), ws_(ws), buffer_(nullptr, &std::free) {}
  std::string_view solver_id() const override { return solver_.id(); }
  const std::string& why() const override { return why_; }
  std::size_t workspace_bytes() const override { return ws_; }
  Status run(const ConvTensors& t) override {
    if (ws_ > 0 && !buffer_) {
      buffer_.reset(static_cast<std::byte*>(std::aligned_alloc(64, (ws_ + 63) / 64 * 64)));
      if (!buffer_) return {StatusCode::out_of_memory, "workspace of " + std::to_string(ws_) + " bytes"};
    }
    return solver_.run(*plan_, t, std::span<std::byte>(buffer_.get(), ws_));
  }

 private:
  const Solver& solver_;
  std::unique_ptr<convguard::Plan> plan_;
  std::string why_;
  std::size_t ws_;
  std::unique_ptr<std::byte, decltype(&std::free)> buffer_;
};

class Ctx final : public Context {
 public:
  Ctx(std::unique_ptr<db::Store> store, probe::DeviceInfo dev) : store_(std::move(store)), dev_(std::move(dev)) {}
  const std::string& device_description() const override { return dev_.description; }
  Result<std::unique_ptr<ConvPlan>> plan(const Problem& p) override {
    auto sel = db::select_solver(*store_, dev_.fingerprint, p);
    if (!sel) return sel.status();
    const Solver& s = *sel->solver;
    if (auto st = s.check(p); !st) return st;
    auto ws = s.workspace_bytes(p);
    if (!ws) return ws.status();
    auto plan = s.plan(p);
    if (!plan) return plan.status();
    return std::unique_ptr<ConvPlan>(new ChosenPlan(s, std::move(*plan), *ws, sel->why));
  }

 private:
  std::unique_ptr<db::Store> store_;
  probe::DeviceInfo dev_;
};

}  // namespace

Result<std::unique_ptr<Context>> Context::open(const ContextOptions& o) {
  if (o.device != "cpu") return invalid_argument("device: '" + o.device + "' is not available in this build (cpu)");
  auto store = db::Store::open(o.db_path.empty() ? db::default_path() : o.db_path);
  if (!store) return store.status();
  return std::unique_ptr<Context>(new Ctx(std::move(*store), probe::cpu_device()));
}

}  // namespace convguard
