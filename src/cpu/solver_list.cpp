// The CPU backend's ordered solver list: the order is the default preference when nothing has
// been measured for a problem (specialised and faster families first, the reference last).
// Adding a solver: one file pair under solvers/ and one line here (docs/adding-a-solver.md).
#include "convguard/registry.hpp"
#include "cpu/solvers/bf16_amx_planar.hpp"
#include "cpu/solvers/bf16_direct.hpp"
#include "cpu/solvers/bwdw.hpp"
#include "cpu/solvers/bwdw_gemm.hpp"
#include "cpu/solvers/bwdw_rows.hpp"
#include "cpu/solvers/depthwise.hpp"
#include "cpu/solvers/direct.hpp"
#include "cpu/solvers/fft.hpp"
#include "cpu/solvers/im2col_gemm.hpp"
#include "cpu/solvers/implicit_gemm.hpp"
#include "cpu/solvers/nchw_gemm.hpp"
#include "cpu/solvers/ref.hpp"
#include "cpu/solvers/rows_conv.hpp"
#include "cpu/solvers/winograd.hpp"

namespace convguard {

std::span<const Solver* const> cpu_solvers() {
  static const cpu::DepthwiseSolver depthwise;
  static const cpu::Bf16PlanarAmxSolver bf16_planar_amx;
  static const cpu::Bf16DirectSolver bf16_amx(cpu::bf16::Kernel::amx_bf16);
  static const cpu::Bf16DirectSolver bf16_direct(cpu::bf16::Kernel::avx512_bf16);
  static const cpu::BwdwSolver bwdw_avx512(cpu::Isa::avx512);
  static const cpu::BwdwSolver bwdw_avx2(cpu::Isa::avx2);
  static const cpu::BwdwRowsSolver bwdw_rows_bf16(cpu::KernelCopy::bf16_avx512);
  static const cpu::BwdwRowsSolver bwdw_rows(cpu::KernelCopy::f32_avx512);
  static const cpu::BwdwRowsSolver bwdw_rows_avx2(cpu::KernelCopy::f32_avx2);
  static const cpu::BwdwGemmSolver bwdw_gemm_bf16(cpu::KernelCopy::bf16_avx512);
  static const cpu::BwdwGemmSolver bwdw_gemm(cpu::KernelCopy::f32_avx512);
  static const cpu::BwdwGemmSolver bwdw_gemm_avx2(cpu::KernelCopy::f32_avx2);
  static const cpu::RowsConvSolver fwd_rows_bf16(Direction::forward, cpu::KernelCopy::bf16_avx512);
  static const cpu::RowsConvSolver fwd_rows(Direction::forward, cpu::KernelCopy::f32_avx512);
  static const cpu::RowsConvSolver fwd_rows_avx2(Direction::forward, cpu::KernelCopy::f32_avx2);
  static const cpu::RowsConvSolver bwdd_rows_bf16(Direction::backward_data,
                                                  cpu::KernelCopy::bf16_avx512);
  static const cpu::RowsConvSolver bwdd_rows(Direction::backward_data, cpu::KernelCopy::f32_avx512);
  static const cpu::RowsConvSolver bwdd_rows_avx2(Direction::backward_data,
                                                  cpu::KernelCopy::f32_avx2);
  static const cpu::NchwGemmSolver nchw_gemm_bf16(cpu::NchwGemmKernel::bf16_avx512);
  static const cpu::NchwGemmSolver nchw_gemm_avx512(cpu::NchwGemmKernel::f32_avx512);
  static const cpu::NchwGemmSolver nchw_gemm_avx2(cpu::NchwGemmKernel::f32_avx2);
  static const cpu::ImplicitGemmSolver implicit_gemm_avx512(cpu::Isa::avx512);
  static const cpu::ImplicitGemmSolver implicit_gemm_avx2(cpu::Isa::avx2);
  static const cpu::WinogradSolver winograd_f4(4);
  static const cpu::WinogradSolver winograd_f2(2);
  static const cpu::DirectSolver direct;
  static const cpu::Im2colGemmSolver im2col_gemm;
  static const cpu::FftSolver fft;
  static const cpu::RefSolver ref;
  static const Solver* const list[] = {
      &depthwise,
      &bf16_planar_amx,
      &bf16_amx,
      &nchw_gemm_bf16,
      &bf16_direct,
      &bwdw_avx512,
      &bwdw_avx2,
      &bwdw_rows_bf16,
      &bwdw_rows,
      &bwdw_rows_avx2,
      &bwdw_gemm_bf16,
      &bwdw_gemm,
      &bwdw_gemm_avx2,
      &fwd_rows_bf16,
      &fwd_rows,
      &fwd_rows_avx2,
      &bwdd_rows_bf16,
      &bwdd_rows,
      &bwdd_rows_avx2,
      &nchw_gemm_avx512,
      &nchw_gemm_avx2,
      &implicit_gemm_avx512,
      &implicit_gemm_avx2,
      &im2col_gemm,
      &winograd_f4,
      &winograd_f2,
      &direct,
      &fft,
      &ref,
  };
  return list;
}

}  // namespace convguard
