#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/roles.hpp"
#include "gpu/solvers/winograd.hpp"

namespace convguard::gpu {
namespace {

constexpr int kTilesH = 4, kTilesW = 8, kTiles = kTilesH * kTilesW;  // 2x2 output tiles
constexpr int kOut = 16, kRed = 8, kThreads = 256;
constexpr int kPH = 2 * kTilesH + 2, kPW = 2 * kTilesW + 2;  // source patch: 10 x 18
constexpr int kPairs = kTiles * kOut / kThreads;             // (tile, channel) pairs per thread
static_assert(kTiles * kRed == kThreads && kOut * kRed <= kThreads, "one transform per thread");

struct Wino : Roles {
  std::int64_t pad[2];  // H, W; backward-data: 2 - pad
  std::int64_t groups_h, groups_w, out_chunks;
  __host__ __device__ std::int64_t items() const {
    return n * groups_h * groups_w * out_chunks * g;
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    winograd(Wino D, const T* __restrict__ src, const T* __restrict__ w, T* dst) {
  __shared__ float patch[kRed][kPH][kPW];
  __shared__ float V[16][kRed][kTiles];
  __shared__ float U[16][kRed][kOut];
  const int tid = threadIdx.x;
  for (std::int64_t item = blockIdx.x; item < D.items(); item += gridDim.x) {
    std::int64_t r = item;
    const std::int64_t w0 = (r % D.groups_w) * 2 * kTilesW;
    r /= D.groups_w;
    const std::int64_t h0 = (r % D.groups_h) * 2 * kTilesH;
    r /= D.groups_h;
    const std::int64_t o0 = (r % D.out_chunks) * kOut;
    r /= D.out_chunks;
    const std::int64_t g = r % D.g, n = r / D.g;
    const T* src_n = src + n * D.src_st[0] + g * D.red_ch * D.src_st[1];
    const T* w_g = w + g * D.w_group;
    float m[kPairs][16] = {};
    for (std::int64_t r0 = 0; r0 < D.red_ch; r0 += kRed) {
      const int nr = static_cast<int>(D.red_ch - r0 < kRed ? D.red_ch - r0 : kRed);
      __syncthreads();  // the previous step's reads are done
      for (int i = tid; i < kRed * kPH * kPW; i += kThreads) {
        const int c = i / (kPH * kPW), y = (i / kPW) % kPH, x = i % kPW;
        const std::int64_t sr = h0 - D.pad[0] + y, sc = w0 - D.pad[1] + x;
        const bool in = c < nr && sr >= 0 && sr < D.src[1] && sc >= 0 && sc < D.src[2];
        patch[c][y][x] =
            in ? to_float(src_n[(r0 + c) * D.src_st[1] + sr * D.src_st[3] + sc * D.src_st[4]])
               : 0.f;
      }
      if (tid < kOut * kRed) {  // U = G g G^T for (output channel o, reduction channel c)
        const int o = tid / kRed, c = tid % kRed;
        float f[3][3] = {};
        if (c < nr && o0 + o < D.out_ch)
          for (int b = 0; b < 3; ++b)
            for (int e = 0; e < 3; ++e)  // backward-data: the filter rotated 180 degrees
              f[b][e] = to_float(
                  w_g[(o0 + o) * D.w_out + (r0 + c) * D.w_red + (D.backward ? 2 - b : b) * D.ws[3] +
                      (D.backward ? 2 - e : e) * D.ws[4]]);
        float t[4][3];
        for (int e = 0; e < 3; ++e) {
          t[0][e] = f[0][e];
          t[1][e] = 0.5f * (f[0][e] + f[1][e] + f[2][e]);
          t[2][e] = 0.5f * (f[0][e] - f[1][e] + f[2][e]);
          t[3][e] = f[2][e];
        }
        for (int i = 0; i < 4; ++i) {
          U[i * 4 + 0][c][o] = t[i][0];
          U[i * 4 + 1][c][o] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
          U[i * 4 + 2][c][o] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
          U[i * 4 + 3][c][o] = t[i][2];
        }
      }
      __syncthreads();
      {  // V = B^T d B for (tile, reduction channel c)
        const int c = tid / kTiles, tile = tid % kTiles;
        const int y0 = (tile / kTilesW) * 2, x0 = (tile % kTilesW) * 2;
        float d[4][4], t[4][4];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) d[i][j] = patch[c][y0 + i][x0 + j];
        for (int j = 0; j < 4; ++j) {
          t[0][j] = d[0][j] - d[2][j];
          t[1][j] = d[1][j] + d[2][j];
          t[2][j] = d[2][j] - d[1][j];
          t[3][j] = d[1][j] - d[3][j];
        }
        for (int i = 0; i < 4; ++i) {
          V[i * 4 + 0][c][tile] = t[i][0] - t[i][2];
          V[i * 4 + 1][c][tile] = t[i][1] + t[i][2];
          V[i * 4 + 2][c][tile] = t[i][2] - t[i][1];
          V[i * 4 + 3][c][tile] = t[i][1] - t[i][3];
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kPairs; ++j) {
        const int q = tid + j * kThreads, tile = q % kTiles, o = q / kTiles;
        for (int c = 0; c < nr; ++c)
#pragma unroll
          for (int e = 0; e < 16; ++e) m[j][e] += U[e][c][o] * V[e][c][tile];
      }
    }
#pragma unroll
    for (int j = 0; j < kPairs; ++j) {  // Y = A^T m A, stored where it lands in dst
      const int q = tid + j * kThreads, tile = q % kTiles, o = q / kTiles;
      if (o0 + o >= D.out_ch) continue;
      float t[2][4];
      for (int k = 0; k < 4; ++k) {
        t[0][k] = m[j][0 * 4 + k] + m[j][1 * 4 + k] + m[j][2 * 4 + k];
        t[1][k] = m[j][1 * 4 + k] - m[j][2 * 4 + k] - m[j][3 * 4 + k];
      }
      const std::int64_t h = h0 + (tile / kTilesW) * 2, wc = w0 + (tile % kTilesW) * 2;
      T* y = dst + n * D.dst_st[0] + (g * D.out_ch + o0 + o) * D.dst_st[1];
      for (int i = 0; i < 2; ++i) {
        const float v[2] = {t[i][0] + t[i][1] + t[i][2], t[i][1] - t[i][2] - t[i][3]};
        for (int k = 0; k < 2; ++k)
          if (h + i < D.out[1] && wc + k < D.out[2])
            y[(h + i) * D.dst_st[3] + (wc + k) * D.dst_st[4]] = from_float<T>(v[k]);
      }
    }
  }
}

Wino make_wino(const Problem& p) {
  const Geometry G = make_geometry(p);
  Wino D{};
  static_cast<Roles&>(D) = make_roles(G, p.direction == Direction::backward_data);
  for (int i = 0; i < 2; ++i) D.pad[i] = D.backward ? 2 - G.pad[1 + i] : G.pad[1 + i];
  D.groups_h = (D.out[1] + 2 * kTilesH - 1) / (2 * kTilesH);
  D.groups_w = (D.out[2] + 2 * kTilesW - 1) / (2 * kTilesW);
  D.out_chunks = (D.out_ch + kOut - 1) / kOut;
  return D;
}

}  // namespace

Status WinogradSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction == Direction::backward_weights)
    return not_applicable("F(2x2,3x3) is written for forward and backward-data only");
  if (p.spatial_dims == 3) return not_applicable("1D and 2D only (3D problem)");
  if (p.filter[1] != 3 || p.filter[2] != 3) return not_applicable("3x3 filters only");
  if (p.stride[1] != 1 || p.stride[2] != 1) return not_applicable("stride 1 only");
  if (p.dilation[1] != 1 || p.dilation[2] != 1) return not_applicable("dilation 1 only");
  return Status::ok();
}

Accuracy WinogradSolver::accuracy(const Problem&) const {
  Accuracy a{false, 2.0};  // as the CPU F(2x2) solver: halves in G, 4x4 sums in B^T d B
  a.local_errors = false;  // a tile's transforms mix its neighbours into each output
  return a;
}

Status WinogradSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte>) const {
  const Problem& p = plan.problem;
  const Wino D = make_wino(p);
  return dispatch_dtype(p.dtype, [&]<typename T>() -> Status {
    T* x = static_cast<T*>(t.x.data);
    T* w = static_cast<T*>(t.w.data);
    T* y = static_cast<T*>(t.y.data);
    const unsigned grid =
        static_cast<unsigned>(D.items() < (std::int64_t{1} << 20) ? D.items() : 1 << 20);
    winograd<T><<<grid, kThreads>>>(D, D.backward ? y : x, w, D.backward ? x : y);
    return check_launch("gpu:winograd launch");
  });
}

}  // namespace convguard::gpu
