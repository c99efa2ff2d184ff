// Selection (db/select.cpp) keeps to the policy: only the solvers of the device kind asked for,
// TF32 variants only where allowed, the fastest verified one otherwise; never one recorded bad.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "db/select.hpp"
#include "db/store.hpp"
#include "temp_store.hpp"

using namespace convguard;

namespace {

// TempStore with a helper that records one trial as the probe would.
struct SelectStore : TempStore {
  SelectStore() : TempStore("select") {}
  void record(const std::string& dev, const Problem& p, const std::string& solver,
              const std::string& status, double ms) {
    db::TrialRecord r;
    r.device = dev, r.problem = identity_string(p), r.solver = solver, r.status = status;
    r.median_ms = r.min_ms = r.first_ms = ms;
    ASSERT_TRUE(store->add_device(dev, dev).is_ok());
    ASSERT_TRUE(store->begin(r, std::nullopt).is_ok());
    ASSERT_TRUE(store->finish(r).is_ok());
  }
};

}  // namespace

TEST(Select, KeepsToTheDeviceKindAndAvoidsBadSolvers) {
  SelectStore t;
  const Problem p = *parse_problem("mb2ic16ih12oc16oh12kh3ph1");
  t.record("dev", p, "cpu:direct", "ok", 5);
  t.record("dev", p, "cpu:im2col_gemm", "ok", 3);
  t.record("dev", p, "cpu:implicit_gemm:avx2", "wrong", 0.1);
  t.record("dev", p, "gpu:naive", "ok", 0.01);  // another kind: never a CPU choice
  auto sel = db::select_solver(*t.store, "dev", p, {Device::cpu, "", false});
  ASSERT_TRUE(sel.is_ok()) << sel.status().message();
  EXPECT_EQ(sel->solver->id(), "cpu:im2col_gemm") << sel->why;
  EXPECT_NE(sel->why.find("cpu:implicit_gemm:avx2 (wrong)"), std::string::npos) << sel->why;
}

TEST(Select, Tf32VariantsOnlyWhereAllowed) {
  if (!find_solver("gpu:tc_implicit_gemm:tf32")) GTEST_SKIP() << "no GPU backend in this build";
  SelectStore t;
  const Problem p = *parse_problem("--stag=axb --wtag=axb --dtag=axb mb2ic16ih12oc16oh12kh3ph1");
  t.record("gpu", p, "gpu:implicit_gemm", "ok", 0.05);
  t.record("gpu", p, "gpu:tc_implicit_gemm:tf32", "ok", 0.01);
  t.record("gpu", p, "cpu:direct", "ok", 0.001);  // another kind: never a GPU choice
  auto fp32 = db::select_solver(*t.store, "gpu", p, {Device::gpu, "", false});
  ASSERT_TRUE(fp32.is_ok());
  EXPECT_EQ(fp32->solver->id(), "gpu:implicit_gemm") << fp32->why;
  auto tf32 = db::select_solver(*t.store, "gpu", p, {Device::gpu, "", true});
  ASSERT_TRUE(tf32.is_ok());
  EXPECT_EQ(tf32->solver->id(), "gpu:tc_implicit_gemm:tf32") << tf32->why;
  // Without evidence: list order, the device reference never ahead of another solver.
  const Problem q = *parse_problem("mb1ic4ih9oc4oh9kh3ph1");
  auto none = db::select_solver(*t.store, "gpu", q, {Device::gpu, "", false});
  ASSERT_TRUE(none.is_ok());
  EXPECT_NE(none->solver->id(), "gpu:naive");
  EXPECT_FALSE(is_tf32_variant(none->solver->id()));
}
