#include <cstdint>
#include <type_traits>

#include "gpu/check.hpp"
#include "gpu/element.cuh"
#include "gpu/solvers/tc_implicit_gemm.hpp"

namespace convguard::gpu {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 32, kThreads = 256;
constexpr int kChunks = kBK / 8;  // 16-byte chunks per tile row

struct Args {
  const void* x;
  const void* w;
  void* y;
  int n, h, w_, c, k, r, s, oh, ow, sh, sw, ph, pw, dh, dw;
  int m, kd;  // GEMM M and reduction length
};

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; zero-filled when !valid (padding, edges).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a * b on one 16x8x16 tile; `ab` names the operand type in the PTX instruction.
#define CG_MMA_16816(ab)                                                                       \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." ab "." ab                              \
               ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                  \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
template <typename T>
__device__ __forceinline__ void mma(float* d, const std::uint32_t* a, const std::uint32_t* b) {
  if constexpr (std::is_same_v<T, cg_bf16>) {
    CG_MMA_16816("bf16");
  } else {
    CG_MMA_16816("f16");
  }
}
#undef CG_MMA_16816

// Tile rows are kChunks 16-byte chunks; chunk j of row i is stored at j ^ ((i >> 1) & 3), so the
// 8 rows one ldmatrix reads fall in 8 different bank groups.
__device__ __forceinline__ int swizzle(int row, int chunk) {
  return row * kChunks + (chunk ^ ((row >> 1) & 3));
}

template <typename T>
__global__ void __launch_bounds__(kThreads) tc_forward(Args a) {
  __shared__ uint4 smem[2][(kBM + kBN) * kChunks];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / 4, warp_n = warp % 4;  // 2 x 4 warps, 64 x 32 each
  const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
  const T* x = static_cast<const T*>(a.x);
  const T* w = static_cast<const T*>(a.w);

  // Each thread loads two A chunks and two B chunks per stage; their rows are fixed.
  int a_img[2], a_ih0[2], a_iw0[2];
  bool a_ok[2], b_ok[2];
  for (int i = 0; i < 2; ++i) {
    const int row = (tid + i * kThreads) / kChunks;
    const int m = m0 + row;
    a_ok[i] = m < a.m;
    const int mm = a_ok[i] ? m : 0;
    const int ow = mm % a.ow, oh = (mm / a.ow) % a.oh;
    a_img[i] = mm / (a.ow * a.oh);
    a_ih0[i] = oh * a.sh - a.ph;
    a_iw0[i] = ow * a.sw - a.pw;
    b_ok[i] = n0 + row < a.k;
  }
  auto load = [&](int stage, int k0) {
    for (int i = 0; i < 2; ++i) {
      const int q = tid + i * kThreads, row = q / kChunks, chunk = q % kChunks;
      const int kk = k0 + chunk * 8;
      const int c = kk % a.c, rs = kk / a.c, s = rs % a.s, r = rs / a.s;
      const int ih = a_ih0[i] + r * a.dh, iw = a_iw0[i] + s * a.dw;
      const bool av = a_ok[i] && kk < a.kd && ih >= 0 && ih < a.h && iw >= 0 && iw < a.w_;
      const T* asrc =
          av ? x + ((static_cast<std::int64_t>(a_img[i]) * a.h + ih) * a.w_ + iw) * a.c + c : x;
      cp_async16(&smem[stage][swizzle(row, chunk)], asrc, av);
      const bool bv = b_ok[i] && kk < a.kd;
      const T* bsrc = bv ? w + static_cast<std::int64_t>(n0 + row) * a.kd + kk : w;
      cp_async16(&smem[stage][kBM * kChunks + swizzle(row, chunk)], bsrc, bv);
    }
  };

  float acc[4][4][4] = {};
  const int tiles = (a.kd + kBK - 1) / kBK;
  load(0, 0);
  cp_async_commit();
  for (int kt = 0; kt < tiles; ++kt) {
    if (kt + 1 < tiles) {
      load((kt + 1) & 1, (kt + 1) * kBK);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const uint4* A = smem[kt & 1];
    const uint4* B = smem[kt & 1] + kBM * kChunks;
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) {
      std::uint32_t af[4][4], bf[2][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int row = warp_m * 64 + mi * 16 + lane % 16;
        ldmatrix_x4(af[mi], &A[swizzle(row, ks * 2 + lane / 16)]);
      }
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        const int row = warp_n * 32 + nj * 16 + lane % 8 + (lane / 16) * 8;
        ldmatrix_x4(bf[nj], &B[swizzle(row, ks * 2 + (lane / 8) % 2)]);
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma<T>(acc[mi][ni], af[mi], &bf[ni / 2][(ni % 2) * 2]);
    }
    __syncthreads();
  }
  // Epilogue: two adjacent output channels per register pair, straight to NHWC y.
  T* y = static_cast<T*>(a.y);
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int col = n0 + warp_n * 32 + ni * 8 + (lane % 4) * 2;
      if (col >= a.k) continue;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_m * 64 + mi * 16 + lane / 4 + half * 8;
        if (row >= a.m) continue;
        T* dst = y + static_cast<std::int64_t>(row) * a.k + col;
        dst[0] = from_float<T>(acc[mi][ni][half * 2]);
        dst[1] = from_float<T>(acc[mi][ni][half * 2 + 1]);
      }
    }
}

bool dense_channels_last(const TensorDesc& d) {
  // Logical order N, C, H, W; dense NHWC strides are H*W*C, 1, W*C, C.
  return d.rank == 4 && d.strides[1] == 1 && d.strides[3] == d.dims[1] &&
         d.strides[2] == d.dims[3] * d.dims[1] && d.strides[0] == d.dims[2] * d.strides[2];
}

}  // namespace

Status TcImplicitGemmSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (p.direction != Direction::forward) return not_applicable("forward only");
  if (p.dtype == DType::f32)
    return not_applicable("f16/bf16 only (tensor cores, fp32 accumulation)");
  if (p.spatial_dims != 2) return not_applicable("2D only");
  if (p.g != 1) return not_applicable("one group only");
  if (p.c % 8 || p.k % 8)
    return not_applicable("needs C and K multiples of 8 (16-byte channel runs)");
  if (!dense_channels_last(x_desc(p)) || !dense_channels_last(w_desc(p)) ||
      !dense_channels_last(y_desc(p)))
    return not_applicable("needs dense NHWC x and y and KRSC w (--stag=axb --wtag=axb --dtag=axb)");
  const double m = static_cast<double>(p.n) * p.output(1) * p.output(2);
  if (m >= 2e9 || static_cast<double>(p.c) * p.taps() >= 2e9 ||
      static_cast<double>(p.n) * p.input[1] * p.input[2] * p.c >= 9e18)
    return not_applicable("sizes beyond 32-bit GEMM indexing");
  if ((m + kBM - 1) / kBM > 2147483647.0 || (p.k + kBN - 1) / kBN > 65535)
    return not_applicable("grid too large");
  return Status::ok();
}

Status TcImplicitGemmSolver::run(const Plan& plan, const ConvTensors& t,
                                 std::span<std::byte>) const {
  const Problem& p = plan.problem;
  Args a{};
  a.x = t.x.data, a.w = t.w.data, a.y = t.y.data;
  a.n = static_cast<int>(p.n), a.h = static_cast<int>(p.input[1]),
  a.w_ = static_cast<int>(p.input[2]);
  a.c = static_cast<int>(p.c), a.k = static_cast<int>(p.k);
  a.r = static_cast<int>(p.filter[1]), a.s = static_cast<int>(p.filter[2]);
  a.oh = static_cast<int>(p.output(1)), a.ow = static_cast<int>(p.output(2));
  a.sh = static_cast<int>(p.stride[1]), a.sw = static_cast<int>(p.stride[2]);
  a.ph = static_cast<int>(p.pad_begin[1]), a.pw = static_cast<int>(p.pad_begin[2]);
  a.dh = static_cast<int>(p.dilation[1]), a.dw = static_cast<int>(p.dilation[2]);
  a.m = a.n * a.oh * a.ow;
  a.kd = a.r * a.s * a.c;
  const dim3 grid(static_cast<unsigned>((a.m + kBM - 1) / kBM),
                  static_cast<unsigned>((a.k + kBN - 1) / kBN));
  if (p.dtype == DType::bf16)
    tc_forward<cg_bf16><<<grid, kThreads>>>(a);
  else
    tc_forward<cg_half><<<grid, kThreads>>>(a);
  return check_launch("gpu:tc_implicit_gemm launch");
}

}  // namespace convguard::gpu
