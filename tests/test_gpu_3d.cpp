// 3D convolutions on the tensor cores: the implicit GEMMs (gpu:tc_implicit_gemm and its TF32
// variant on any CUDA GPU, gpu:wgmma_implicit_gemm on Hopper), forward and backward-data
// (dilation 1, any stride up to 16 stride phases), and backward-weights (gpu:tc_bwd_weights,
// gpu:wgmma_bwd_weights: pixels over (n, od, oh, ow), columns over (t, r, s, c); any stride,
// dilation and padding). Their k3D kernels count a GEMM row's image over (n, od) and the
// reduction's tap rows over (t, r) (tc::Depth); backward-data runs them on dy with the filter
// flipped, which at stride 1 reverses the combined tap row, and when strided once per stride phase
// (qd, qh, qw), each with its flipped sub-filter (tc::PhaseDepth). What they take and decline is
// checked without a GPU; the shapes (ragged and aligned channels, depth strides, dilations and
// paddings that leave whole depth taps outside the input, paddings beyond the filter, 1-deep
// inputs, the filter read in place and flipped, split reductions, real 3D layers by sampling,
// bit-identical repeated runs) need one.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "convguard/trial.hpp"
#include "gpu/gpu.hpp"
#include "gpu_shapes.hpp"

using namespace convguard;
using convguard::testing::expect_verified;
using convguard::testing::two_runs;
using convguard::testing::verify_on_shapes;

namespace {

bool gpu_here() {
  static const bool ok = gpu::device_count() > 0 && gpu::open_device(0).is_ok();
  return ok;
}

// Whether `id` runs 3D problems here (the wgmma solver only on sm_90 with the build's sm_90a code).
bool takes_3d_here(const char* id) {
  const Solver* s = find_solver(id);
  const auto probe = parse_problem(
      "--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb1ic8id4ih8iw8oc8kd3kh3kw3pd1ph1pw1");
  return s && probe && s->check(*probe).is_ok();
}

// A random 3D forward problem for `id` (f32 for the TF32 variant, else f16 or bf16): channels on
// and off 16-byte chunks, depth sizes 1-9 with filter depths 1-3, depth strides and dilations 1-2,
// paddings 0-2 at each end (a tap whose whole depth slice lies in the padding loads zeros).
template <typename Pick>
Problem random_3d(Pick pick, int i, bool f32) {
  const int channels[] = {3, 8, 16, 20, 64, 5};
  Problem p;
  p.spatial_dims = 3;
  p.n = pick(1, 3);
  p.c = channels[pick(0, 5)];
  p.k = i % 5 == 0 ? pick(1, 9) : 8 * pick(1, 20);  // odd K: the element-wise epilogue
  p.input = {pick(1, 9), pick(1, 17), pick(1, 17)};
  p.filter = {pick(1, 3), pick(1, 3), pick(1, 3)};
  p.stride = {pick(1, 2), pick(1, 2), pick(1, 2)};
  p.dilation = {pick(1, 2), pick(1, 2), pick(1, 2)};
  p.pad_begin = {pick(0, 2), pick(0, 1), pick(0, 1)};
  p.pad_end = {pick(-1, 2), pick(0, 1), pick(0, 1)};  // -1: the last input depth unread
  p.direction = Direction::forward;
  p.dtype = f32 ? DType::f32 : i % 2 ? DType::bf16 : DType::f16;
  p.x_layout = p.w_layout = p.y_layout = Layout::nhwc;
  return p;
}

// A random 3D backward-data problem (dilation 1): as random_3d, with every third draw of K 64 or
// 128 and C a multiple of 8, where gpu:wgmma_implicit_gemm reads the caller's filter in place at
// stride 1 (the others, and every strided plan, flip it into the workspace), and paddings up to 3
// (beyond a filter of 1 or 2: dy rows skipped). Odd draws are strided (stride phases: depth 1-2,
// rows 1-3, columns 1-2, up to 12 phases), every seventh of those with a 1x1x1 filter at stride
// 2, whose odd phases no tap reaches (they write zeros).
template <typename Pick>
Problem random_3d_bwd_data(Pick pick, int i, bool f32) {
  Problem p = random_3d(pick, i, f32);
  p.direction = Direction::backward_data;
  p.stride = {1, 1, 1};
  if (i % 2) p.stride = {pick(1, 2), pick(1, 3), pick(1, 2)};
  if (i % 14 == 1) p.filter = {1, 1, 1}, p.stride = {2, 2, 2};
  p.dilation = {1, 1, 1};
  p.pad_begin = {pick(0, 3), pick(0, 2), pick(0, 2)};
  p.pad_end = {pick(-1, 2), pick(0, 2), pick(0, 2)};  // -1: dy shorter than dx reaches
  if (i % 3 == 0) p.k = 64 * pick(1, 2), p.c = 8 * pick(1, 12);
  return p;
}

}  // namespace

// What the tensor-core solvers say of 3D problems: forward and backward-data NDHWC taken (strided
// too), everything else declined with its reason (no GPU needed, but for the wgmma solver, which
// declines off Hopper).
TEST(Gpu, TensorCore3DTakesForwardAndBackwardData) {
  if (!find_solver("gpu:tc_implicit_gemm")) GTEST_SKIP() << "no CUDA backend in this build";
  const std::string nhwc = "--stag=axb --wtag=axb --dtag=axb ";
  for (const char* id :
       {"gpu:tc_implicit_gemm", "gpu:tc_implicit_gemm:tf32", "gpu:wgmma_implicit_gemm"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    const bool tf32 = std::string_view(id).ends_with(":tf32");
    const std::string dt = tf32 ? "" : "--dt=bf16 ";
    const bool here = std::string_view(id) != "gpu:wgmma_implicit_gemm" ||
                      takes_3d_here("gpu:wgmma_implicit_gemm");
    if (here) {
      for (const std::string& ok :
           {dt + nhwc + "mb2ic3id8ih16iw16oc16kd3kh3kw3pd1ph1pw1",
            dt + nhwc + "mb1ic64id5ih9iw9oc40kd3kh3kw3sd2sh2sw2",
            dt + nhwc + "mb1ic20id1ih7iw7oc9kd1kh3kw3ph1pw1",
            "--dir=BWD_D " + dt + nhwc + "mb2ic16id6ih8iw8oc16kd3kh3kw3pd1ph1pw1",
            "--dir=BWD_D " + dt + nhwc + "mb2ic16id6ih8iw8oc16kd3kh3kw3sd2sh1sw1pd1ph1pw1",
            "--dir=BWD_D " + dt + nhwc + "mb2ic16id6ih8iw8oc16kd3kh3kw3sh2sw2pd1ph1pw1",
            "--dir=BWD_D " + dt + nhwc + "mb1ic64id8ih28iw28oc128kd1kh1kw1sd2sh2sw2"}) {
        auto p = parse_problem(ok);
        ASSERT_TRUE(p.is_ok()) << ok << ": " << p.status().message();
        EXPECT_TRUE(s->check(*p).is_ok()) << id << " " << ok << ": " << s->check(*p).message();
      }
    }
    for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
             {"--dir=BWD_D " + dt + nhwc + "mb2ic16id12ih12iw12oc16kd3kh3kw3sd2sh3sw3pd1ph1pw1",
              "at most 16 stride phases (stride_d * stride_h * stride_w <= 16"},
             {"--dir=BWD_D " + dt + nhwc + "mb2ic16id6ih8iw8oc16kd3kh3kw3dd1pd2ph1pw1",
              "dilation 1 only"},
             {dt + "mb2ic16id6ih8iw8oc16kd3kh3kw3pd1ph1pw1", "NHWC"},
             {dt + nhwc + "g2mb2ic16id6ih8iw8oc16kd3kh3kw3pd1ph1pw1", "one group"}}) {
      auto p = parse_problem(text);
      ASSERT_TRUE(p.is_ok()) << text << ": " << p.status().message();
      const Status st = s->check(*p);
      EXPECT_EQ(st.code(), StatusCode::not_applicable) << id << " " << text;
      if (here) {
        EXPECT_NE(st.message().find(why), std::string::npos) << id << ": " << st.message();
      }
    }
  }
}

// What gpu:wgmma_implicit_gemm:tf32 says of 3D f32 problems: forward and backward-data (strided
// too) taken with C and K multiples of 4 on Hopper, C = 3 declined with its reason everywhere.
TEST(Gpu, WgmmaTf32TakesThreeD) {
  const Solver* s = find_solver("gpu:wgmma_implicit_gemm:tf32");
  if (!s) GTEST_SKIP() << "no CUDA backend in this build";
  const std::string nhwc = "--stag=axb --wtag=axb --dtag=axb ";
  if (takes_3d_here("gpu:wgmma_implicit_gemm")) {
    for (const std::string& ok :
         {nhwc + "mb2ic16id8ih16iw16oc16kd3kh3kw3pd1ph1pw1",
          "--dir=BWD_D " + nhwc + "mb2ic16id6ih8iw8oc16kd3kh3kw3pd1ph1pw1",
          "--dir=BWD_D " + nhwc + "mb2ic16id6ih8iw8oc16kd3kh3kw3sd2sh2sw2pd1ph1pw1"}) {
      auto p = parse_problem(ok);
      ASSERT_TRUE(p.is_ok()) << ok << ": " << p.status().message();
      EXPECT_TRUE(s->check(*p).is_ok()) << ok << ": " << s->check(*p).message();
    }
  }
  auto c3 = parse_problem(nhwc + "mb2ic3id8ih16iw16oc16kd3kh3kw3pd1ph1pw1");
  ASSERT_TRUE(c3.is_ok());
  const Status st = s->check(*c3);
  EXPECT_EQ(st.code(), StatusCode::not_applicable);
  EXPECT_NE(st.message().find("multiples of 4"), std::string::npos) << st.message();
}

TEST(Gpu, TensorCore3DOnItsShapes) {
  if (!gpu_here()) GTEST_SKIP() << "no GPU here: GPU tests skipped";
  for (const char* id : {"gpu:tc_implicit_gemm", "gpu:tc_implicit_gemm:tf32",
                         "gpu:wgmma_implicit_gemm", "gpu:wgmma_implicit_gemm:tf32"}) {
    const bool tf32 = std::string_view(id).ends_with(":tf32");
    const bool wgmma = std::string_view(id).starts_with("gpu:wgmma");
    if (wgmma && !takes_3d_here("gpu:wgmma_implicit_gemm")) {
      std::printf("%s: not on this GPU\n", id);
      continue;
    }
    // The wgmma TF32 variant takes whole 16-byte chunks only: C and K multiples of 4.
    auto aligned = [&](Problem p) {
      if (wgmma && tf32) p.c = (p.c + 3) / 4 * 4, p.k = (p.k + 3) / 4 * 4;
      return p;
    };
    // Draws with an empty output are skipped; most are valid.
    EXPECT_GT(verify_on_shapes(id, 120,
                               [&](auto pick, int i) { return aligned(random_3d(pick, i, tf32)); }),
              60)
        << id;
    EXPECT_GT(
        verify_on_shapes(
            id, 140, [&](auto pick, int i) { return aligned(random_3d_bwd_data(pick, i, tf32)); }),
        70)
        << id << " backward-data";
  }
}

// Backward-weights in 3D: random shapes (as random_3d: every stride, dilation and padding; C and
// K multiples of 8 for the wgmma solver, any for tc's, whose ragged variant takes the others),
// then a many-pixel layer whose reduction splits (its two runs bit for bit), a deep one, a strided
// one, one whose 162 tiles take the wgmma kernel's 32-pixel stages (two blocks an SM on 132 SMs)
// and one whose images are smaller than a stage (the pixel carries cross images every stage); the
// TF32 variant on the same in f32.
TEST(Gpu, TensorCore3DBackwardWeights) {
  if (!find_solver("gpu:tc_bwd_weights")) GTEST_SKIP() << "no CUDA backend in this build";
  for (const char* id :
       {"gpu:tc_bwd_weights", "gpu:tc_bwd_weights:tf32", "gpu:wgmma_bwd_weights"}) {
    const Solver* s = find_solver(id);
    ASSERT_NE(s, nullptr) << id;
    const bool wgmma = std::string_view(id) == "gpu:wgmma_bwd_weights";
    const bool tf32 = is_tf32_variant(id);
    const std::string nhwc = std::string("--dir=BWD_W ") + (tf32 ? "" : "--dt=bf16 ") +
                             "--stag=axb --wtag=axb --dtag=axb ";
    auto layer = parse_problem(nhwc + "mb2ic64id8ih28iw28oc64kd3kh3kw3pd1ph1pw1");
    ASSERT_TRUE(layer.is_ok());
    const Status taken = s->check(*layer);
    if (!taken) {  // off Hopper the wgmma solver declines everything, saying why; tc's takes it
      EXPECT_TRUE(wgmma) << id << ": " << taken.message();
      continue;
    }
    if (!gpu_here()) continue;
    EXPECT_GT(verify_on_shapes(id, 120,
                               [&](auto pick, int i) {
                                 Problem p = random_3d(pick, i, tf32);
                                 p.direction = Direction::backward_weights;
                                 if (wgmma) p.c = 8 * pick(1, 8), p.k = 8 * pick(1, 20);
                                 return p;
                               }),
              60)
        << id;
    for (const std::string& text : {nhwc + "mb2ic64id8ih28iw28oc64kd3kh3kw3pd1ph1pw1",
                                    nhwc + "mb1ic256id4ih7iw7oc256kd3kh3kw3pd1ph1pw1",
                                    nhwc + "mb2ic64id8ih28iw28oc128kd3kh3kw3sd2sh2sw2pd1ph1pw1",
                                    nhwc + "mb1ic256id4ih7iw7oc384kd3kh3kw3pd1ph1pw1",
                                    nhwc + "mb8ic64id2ih3iw3oc64kd3kh3kw3pd1ph1pw1"})
      expect_verified(*s, text);
    const auto outs = two_runs(*s, *layer);
    ASSERT_EQ(outs.size(), 2u) << id;
    EXPECT_TRUE(outs[0] == outs[1]) << id << ": two runs of the split layer differ";
  }
}

// Real 3D layers, verified by sampling against the fp64 reference: a C3D-style 3x3x3 layer with
// many tiles, a deep one with few tiles (the reduction split), and a first layer (C = 3), forward,
// the first two backward-data, then 3D ResNet-18's strided layers backward-data; then two runs of
// each split one must give the same bits (partial sums in a fixed order).
TEST(Gpu, TensorCore3DLayers) {
  if (!gpu_here()) GTEST_SKIP() << "no GPU here: GPU tests skipped";
  const std::string nhwc = "--dt=bf16 --stag=axb --wtag=axb --dtag=axb ";
  const std::vector<std::string> layers = {
      nhwc + "mb2ic64id16ih56iw56oc64kd3kh3kw3pd1ph1pw1",
      nhwc + "mb1ic256id4ih7iw7oc256kd3kh3kw3pd1ph1pw1",
      nhwc + "mb4ic3id16ih112iw112oc64kd3kh3kw3pd1ph1pw1",
      // backward-data: the filter read in place (K = 64) by the wgmma solver, and a split one
      "--dir=BWD_D " + nhwc + "mb2ic64id16ih56iw56oc64kd3kh3kw3pd1ph1pw1",
      "--dir=BWD_D " + nhwc + "mb1ic256id4ih7iw7oc256kd3kh3kw3pd1ph1pw1",
      // strided backward-data (3D ResNet-18's stride-2 layers: 8 stride phases; the 1x1x1
      // downsampling's 7 of 8 phases no tap reaches), and its stem (stride 1 x 2 x 2, C = 3)
      "--dir=BWD_D " + nhwc + "mb2ic64id16ih56iw56oc128kd3kh3kw3sd2sh2sw2pd1ph1pw1",
      "--dir=BWD_D " + nhwc + "mb2ic128id8ih28iw28oc256kd1kh1kw1sd2sh2sw2",
      "--dir=BWD_D " + nhwc + "mb2ic3id16ih112iw112oc64kd3kh7kw7sd1sh2sw2pd1ph3pw3",
      // many tiles: the wgmma solvers' 128 x 256 and 256 x 128 tiles (the 2D tile rules)
      nhwc + "mb8ic64id8ih28iw28oc256kd1kh1kw1", nhwc + "mb8ic64id16ih28iw28oc128kd1kh1kw1"};
  for (const char* id : {"gpu:tc_implicit_gemm", "gpu:tc_implicit_gemm:tf32",
                         "gpu:wgmma_implicit_gemm", "gpu:wgmma_implicit_gemm:tf32"}) {
    const Solver* s = find_solver(id);
    const bool tf32 = std::string_view(id).ends_with(":tf32");
    const bool wgmma = std::string_view(id).starts_with("gpu:wgmma");
    if (!s || !takes_3d_here(wgmma ? "gpu:wgmma_implicit_gemm" : "gpu:tc_implicit_gemm")) continue;
    // The TF32 variant on the same layers in f32.
    auto as_dtype = [&](std::string text) {
      if (tf32) text.erase(text.find("--dt=bf16 "), 10);
      return text;
    };
    for (const std::string& text : layers) {
      // The wgmma TF32 variant declines C = 3 (gpu:tc_implicit_gemm:tf32 takes it).
      if (wgmma && tf32 && text.find("ic3id") != std::string::npos) continue;
      expect_verified(*s, as_dtype(text));
    }
    for (const std::size_t i : {1, 4}) {
      auto split = parse_problem(as_dtype(layers[i]));
      ASSERT_TRUE(split.is_ok());
      const auto outs = two_runs(*s, *split);
      ASSERT_EQ(outs.size(), 2u) << id;
      EXPECT_TRUE(outs[0] == outs[1]) << id << ": two runs of " << layers[i] << " differ";
    }
  }
}
