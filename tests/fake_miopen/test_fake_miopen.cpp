// The simulated MIOpen answers as the real one does (MIOpen's source at rocm-5.7.0 is the
// specification, docs/miopen.md "What MIOpen checks"): the workspace query does not ask
// IsApplicable() of solvers that need no workspace, compile and Immediate run whatever they are
// given, and only *GetSolution lists applicable solutions. The plugin's old check() relied on the
// opposite; these tests keep the simulation from drifting back to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "vendor/miopen_table.hpp"

extern "C" {
struct FakeSolution {  // miopenConvSolution_t
  float time;
  std::size_t workspace_size;
  std::uint64_t solution_id;
  int algorithm;
};
int miopenCreate(void**);
int miopenCreateTensorDescriptor(void**);
int miopenSetTensorDescriptor(void*, int, int, const int*, const int*);
int miopenCreateConvolutionDescriptor(void**);
int miopenInitConvolutionNdDescriptor(void*, int, const int*, const int*, const int*, int);
int miopenConvolutionForwardGetSolutionWorkspaceSize(void*, void*, void*, void*, void*,
                                                     std::uint64_t, std::size_t*);
int miopenConvolutionForwardGetSolutionCount(void*, void*, void*, void*, void*, std::size_t*);
int miopenConvolutionForwardGetSolution(void*, void*, void*, void*, void*, std::size_t,
                                        std::size_t*, FakeSolution*);
int miopenConvolutionForwardCompileSolution(void*, void*, void*, void*, void*, std::uint64_t);
int miopenConvolutionForwardImmediate(void*, void*, const void*, void*, const void*, void*, void*,
                                      void*, void*, std::size_t, std::uint64_t);
}

namespace {

std::uint64_t id_of(const std::string& name) {
  static const auto t = convguard::miopen_table::load();
  const auto* s = t->find(name);
  return s ? s->id : 0;
}

// Forward, fp32, NCHW, 1x8x6x6 input, 4 filters of kxk, stride 1, padding k/2.
struct Fwd {
  void *h = nullptr, *x = nullptr, *w = nullptr, *y = nullptr, *c = nullptr;
  std::vector<float> xs = std::vector<float>(8 * 36, 1.0f), ws, ys = std::vector<float>(4 * 36);
  explicit Fwd(int k) : ws(4 * 8 * k * k, 0.5f) {
    miopenCreate(&h);
    auto tensor = [](void** d, std::vector<int> dims) {
      int strides[4];
      strides[3] = 1;
      for (int i = 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
      miopenCreateTensorDescriptor(d);
      miopenSetTensorDescriptor(*d, 1, 4, dims.data(), strides);
    };
    tensor(&x, {1, 8, 6, 6});
    tensor(&w, {4, 8, k, k});
    tensor(&y, {1, 4, 6, 6});
    const int pad[2] = {k / 2, k / 2}, one[2] = {1, 1};
    miopenCreateConvolutionDescriptor(&c);
    miopenInitConvolutionNdDescriptor(c, 2, pad, one, one, 0);
  }
  std::vector<std::uint64_t> listed() {
    std::size_t n = 0;
    EXPECT_EQ(miopenConvolutionForwardGetSolutionCount(h, w, x, c, y, &n), 0);
    std::vector<FakeSolution> s(n + 1);
    std::size_t got = 0;
    EXPECT_EQ(miopenConvolutionForwardGetSolution(h, w, x, c, y, s.size(), &got, s.data()), 0);
    std::vector<std::uint64_t> ids;
    for (std::size_t i = 0; i < got; ++i) ids.push_back(s[i].solution_id);
    return ids;
  }
  bool lists(const std::string& name) {
    const auto ids = listed();
    return std::find(ids.begin(), ids.end(), id_of(name)) != ids.end();
  }
};

TEST(FakeMiopen, WorkspaceQuerySucceedsForInapplicableZeroWorkspaceSolvers) {
  Fwd f(1);  // 1x1 filters: ConvAsm3x3U (MayNeedWorkspace() false) does not apply
  std::size_t bytes = 123;
  EXPECT_EQ(miopenConvolutionForwardGetSolutionWorkspaceSize(f.h, f.w, f.x, f.c, f.y,
                                                             id_of("ConvAsm3x3U"), &bytes),
            0);
  EXPECT_EQ(bytes, 0u);
  EXPECT_FALSE(f.lists("ConvAsm3x3U"));
  // ConvMPBidirectWinograd<2-3> may need a workspace: the query asks IsApplicable() (3x3 only).
  EXPECT_EQ(miopenConvolutionForwardGetSolutionWorkspaceSize(
                f.h, f.w, f.x, f.c, f.y, id_of("ConvMPBidirectWinograd<2-3>"), &bytes),
            3);  // miopenStatusBadParm
}

TEST(FakeMiopen, GetSolutionListsOnlyApplicableSolutions) {
  Fwd f(3);
  EXPECT_TRUE(f.lists("ConvAsm3x3U"));
  EXPECT_TRUE(f.lists("ConvDirectNaiveConvFwd"));
  EXPECT_FALSE(f.lists("ConvAsm1x1U"));       // 1x1 only
  EXPECT_FALSE(f.lists("ConvAsmBwdWrW3x3"));  // no forward kernel
}

TEST(FakeMiopen, ImmediateRunsAnInapplicableSolverAndComputesGarbage) {
  Fwd f(1);
  const std::uint64_t id = id_of("ConvAsm3x3U");
  EXPECT_EQ(miopenConvolutionForwardCompileSolution(f.h, f.w, f.x, f.c, f.y, id), 0);
  EXPECT_EQ(miopenConvolutionForwardImmediate(f.h, f.w, f.ws.data(), f.x, f.xs.data(), f.c, f.y,
                                              f.ys.data(), nullptr, 0, id),
            0);
  int right = 0;  // every output is 8 * 0.5 = 4 for a 1x1 convolution of ones
  for (float v : f.ys) right += std::fabs(v - 4.0f) < 1e-6f;
  EXPECT_LT(right, static_cast<int>(f.ys.size()) / 2);
}

TEST(FakeMiopen, WithoutAFindDbRecordOnlyDynamicSolversWithAWtiAreListed) {
  Fwd f(3);
  setenv("FAKE_MIOPEN_SYSTEM_FIND_DB", "0", 1);
  EXPECT_TRUE(f.lists("GemmFwdRest"));
  EXPECT_TRUE(f.lists("ConvDirectNaiveConvFwd"));
  EXPECT_TRUE(f.lists("ConvBinWinogradRxSf2x3g1"));
  EXPECT_FALSE(f.lists("ConvAsm3x3U"));         // applies, but not dynamic
  EXPECT_FALSE(f.lists("ConvBinWinogradRxS"));  // dynamic, but GetWti() is the default -2
  unsetenv("FAKE_MIOPEN_SYSTEM_FIND_DB");
}

}  // namespace
