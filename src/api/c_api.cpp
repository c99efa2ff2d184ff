// The C API (include/convguard/convguard.h) over Context / ConvPlan.
#include <cstdio>
#include <string>

#include "convguard/canonical.hpp"
#include "convguard/context.hpp"
#include "convguard/convguard.h"

struct cg_context {
  std::unique_ptr<convguard::Context> ctx;
};
struct cg_plan {
  convguard::Problem problem;
  std::unique_ptr<convguard::ConvPlan> plan;
  std::string solver;
};

namespace {
int fail(const convguard::Status& s, char* msg, size_t len) {
  if (msg && len) std::snprintf(msg, len, "%s", s.to_string().c_str());
  return s.is_ok() ? 1 : static_cast<int>(s.code());
}
}  // namespace

extern "C" {

int cg_context_open(const char* device, const char* db_path, cg_context** out, char* msg,
                    size_t msg_len) {
  return cg_context_open_ex(device, db_path, 0, out, msg, msg_len);
}

int cg_context_open_ex(const char* device, const char* db_path, unsigned flags, cg_context** out,
                       char* msg, size_t msg_len) {
  if (!out) return fail(convguard::invalid_argument("out: must not be NULL"), msg, msg_len);
  if (flags & ~(CG_PROBE_UNKNOWN | CG_ALLOW_TF32))
    return fail(convguard::invalid_argument("flags: unknown bits"), msg, msg_len);
  convguard::ContextOptions o;
  o.probe_unknown = (flags & CG_PROBE_UNKNOWN) != 0;
  o.allow_tf32 = (flags & CG_ALLOW_TF32) != 0;
  if (device) o.device = device;
  if (db_path) o.db_path = db_path;
  auto ctx = convguard::Context::open(o);
  if (!ctx) return fail(ctx.status(), msg, msg_len);
  *out = new cg_context{std::move(*ctx)};
  return 0;
}

void cg_context_close(cg_context* ctx) {
  delete ctx;
}

int cg_plan_create(cg_context* ctx, const char* problem, cg_plan** out, char* msg, size_t msg_len) {
  if (!ctx || !problem || !out)
    return fail(convguard::invalid_argument("ctx/problem/out: must not be NULL"), msg, msg_len);
  auto p = convguard::parse_problem(problem);
  if (!p) return fail(p.status(), msg, msg_len);
  auto plan = ctx->ctx->plan(*p);
  if (!plan) return fail(plan.status(), msg, msg_len);
  const std::string id((*plan)->solver_id());
  *out = new cg_plan{*p, std::move(*plan), id};
  return 0;
}

const char* cg_plan_solver(const cg_plan* plan) {
  return plan ? plan->solver.c_str() : "";
}
const char* cg_plan_why(const cg_plan* plan) {
  return plan ? plan->plan->why().c_str() : "";
}
uint64_t cg_plan_workspace_bytes(const cg_plan* plan) {
  return plan ? plan->plan->workspace_bytes() : 0;
}

int cg_plan_run(cg_plan* plan, void* x, void* w, void* y, char* msg, size_t msg_len) {
  if (!plan || !x || !w || !y)
    return fail(convguard::invalid_argument("plan/x/w/y: must not be NULL"), msg, msg_len);
  const convguard::ConvTensors t{{x, convguard::x_desc(plan->problem)},
                                 {w, convguard::w_desc(plan->problem)},
                                 {y, convguard::y_desc(plan->problem)}};
  const convguard::Status s = plan->plan->run(t);
  if (!s) return fail(s, msg, msg_len);
  return 0;
}

void cg_plan_destroy(cg_plan* plan) {
  delete plan;
}

}  // extern "C"
