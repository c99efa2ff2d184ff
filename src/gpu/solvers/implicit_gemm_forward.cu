// gpu:implicit_gemm's forward kernel (implicit_gemm.hpp): the GEMM M = N*OD*OH*OW pixels x
// N = K/G channels over C/G*taps, with what makes SIMT GEMMs fast and the generic gather lacks:
// a 128x64 tile per block of 256 threads, 8x4 outputs per thread read from shared memory as
// float4, the next stage's operands loaded into registers while this stage is computed, and no
// 64-bit divisions in the main loop (each thread's pixel is decomposed once; the filter taps'
// offsets are a table in shared memory; the reduction position advances by increments).
#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/implicit_gemm.hpp"

namespace convguard::gpu {
namespace {

constexpr int kBM = 128, kBN = 64, kBK = 16, kThreads = 256;
constexpr int kAPer = kBM * kBK / kThreads, kBPer = kBN * kBK / kThreads;  // 8 and 4 loads
constexpr int kMaxTaps = 512;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    forward_tiled(Geometry G, int M, const T* __restrict__ x, const T* __restrict__ w, T* y) {
  __shared__ __align__(16) float As[kBK][kBM];
  __shared__ __align__(16) float Bs[kBK][kBN];
  __shared__ std::int64_t x_tap[kMaxTaps], w_tap[kMaxTaps];
  __shared__ int tap_pos[kMaxTaps][3];  // the tap's D, H, W offset in the input
  const int tid = threadIdx.x, taps = static_cast<int>(G.taps());
  const int red = static_cast<int>(G.cg) * taps;
  for (int t = tid; t < taps; t += kThreads) {
    const int e = t % static_cast<int>(G.f[2]), b = (t / static_cast<int>(G.f[2])) % G.f[1],
              a = t / static_cast<int>(G.f[2] * G.f[1]);
    tap_pos[t][0] = a * G.dil[0], tap_pos[t][1] = b * G.dil[1], tap_pos[t][2] = e * G.dil[2];
    x_tap[t] = tap_pos[t][0] * G.xs[2] + tap_pos[t][1] * G.xs[3] + tap_pos[t][2] * G.xs[4];
    w_tap[t] = a * G.ws[2] + b * G.ws[3] + e * G.ws[4];
  }
  const std::int64_t g = blockIdx.z;
  const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
  // This thread's A row (one pixel) and B column (one output channel), fixed for the whole loop.
  const int am = tid % kBM, aq = tid / kBM, bn = tid % kBN, bq = tid / kBN;
  const int m = m0 + am;
  const bool mv = m < M;
  int pos0[3] = {};
  const T* xrow = x;
  if (mv) {
    std::int64_t n, od, oh, ow;
    G.out_index(m, n, od, oh, ow);
    pos0[0] = static_cast<int>(od * G.stride[0] - G.pad[0]);
    pos0[1] = static_cast<int>(oh * G.stride[1] - G.pad[1]);
    pos0[2] = static_cast<int>(ow * G.stride[2] - G.pad[2]);
    xrow = x + n * G.xs[0] + g * G.cg * G.xs[1];
  }
  const bool nv = n0 + bn < G.kg;
  const T* wcol = w + (g * G.kg + (nv ? n0 + bn : 0)) * G.ws[0];
  __syncthreads();  // the tap tables

  float a_reg[kAPer], b_reg[kBPer];
  auto load = [&](int k0) {
    int r = k0 + aq * kAPer, c = r / taps, t = r - c * taps;  // A: kAPer consecutive positions
#pragma unroll
    for (int j = 0; j < kAPer; ++j) {
      float v = 0.f;
      if (mv && r + j < red) {
        const int d = pos0[0] + tap_pos[t][0], h = pos0[1] + tap_pos[t][1],
                  wc = pos0[2] + tap_pos[t][2];
        if (d >= 0 && d < G.in[0] && h >= 0 && h < G.in[1] && wc >= 0 && wc < G.in[2])
          v = to_float(xrow[c * G.xs[1] + pos0[0] * G.xs[2] + pos0[1] * G.xs[3] +
                            pos0[2] * G.xs[4] + x_tap[t]]);
      }
      a_reg[j] = v;
      if (++t == taps) t = 0, ++c;
    }
    r = k0 + bq, c = r / taps, t = r - c * taps;  // B: positions bq, bq + 4, ...
#pragma unroll
    for (int j = 0; j < kBPer; ++j) {
      b_reg[j] = nv && r + j * (kBK / kBPer) < red ? to_float(wcol[c * G.ws[1] + w_tap[t]]) : 0.f;
      t += kBK / kBPer;
      while (t >= taps) t -= taps, ++c;
    }
  };
  auto store = [&] {
#pragma unroll
    for (int j = 0; j < kAPer; ++j) As[aq * kAPer + j][am] = a_reg[j];
#pragma unroll
    for (int j = 0; j < kBPer; ++j) Bs[bq + j * (kBK / kBPer)][bn] = b_reg[j];
  };

  const int tx = tid % 16, ty = tid / 16;  // outputs: pixels ty*8..+7, channels tx*4..+3
  float acc[8][4] = {};
  load(0);
  store();
  __syncthreads();
  for (int k0 = 0; k0 < red; k0 += kBK) {
    const bool more = k0 + kBK < red;
    if (more) load(k0 + kBK);  // in flight while this stage is computed
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][ty * 8]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][ty * 8 + 4]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
    if (more) {
      store();
      __syncthreads();
    }
  }
  for (int i = 0; i < 8; ++i) {
    const int mm = m0 + ty * 8 + i;
    if (mm >= M) continue;
    std::int64_t n, od, oh, ow;
    G.out_index(mm, n, od, oh, ow);
    T* yrow = y + n * G.ys[0] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4];
    for (int j = 0; j < 4; ++j) {
      const std::int64_t col = n0 + tx * 4 + j;
      if (col < G.kg) yrow[(g * G.kg + col) * G.ys[1]] = from_float<T>(acc[i][j]);
    }
  }
}

}  // namespace

bool forward_tiled_applies(const Geometry& G, Direction d) {
  const double m = static_cast<double>(G.n) * G.out[0] * G.out[1] * G.out[2];
  return d == Direction::forward && G.taps() <= kMaxTaps && m < 2e9 &&
         static_cast<double>(G.cg) * G.taps() < 2e9 && G.in[0] < (1 << 30) && G.in[1] < (1 << 30) &&
         G.in[2] < (1 << 30) && (G.kg + kBN - 1) / kBN <= 65535 && G.g <= 65535;
}

Status launch_forward_tiled(const Geometry& G, DType dt, const ConvTensors& t) {
  const int M = static_cast<int>(G.n * G.out[0] * G.out[1] * G.out[2]);
  const dim3 grid(static_cast<unsigned>((M + kBM - 1) / kBM),
                  static_cast<unsigned>((G.kg + kBN - 1) / kBN), static_cast<unsigned>(G.g));
  return dispatch_dtype(dt, [&]<typename T>() {
    forward_tiled<T><<<grid, kThreads>>>(G, M, static_cast<const T*>(t.x.data),
                                         static_cast<const T*>(t.w.data),
                                         static_cast<T*>(t.y.data));
    return check_launch("gpu:implicit_gemm forward launch");
  });
}

}  // namespace convguard::gpu
