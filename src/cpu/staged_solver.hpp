// Base of the CPU solvers that compute on dense fp32 buffers. It owns what every such solver
// would otherwise repeat: choosing in-place use or a staging copy for each tensor (from the
// problem alone, so workspace_bytes and run agree), converting dtypes, layouts and strides,
// materialising padding, and writing the output back. A family implements staging() (the
// order and padding its loops want), scratch() (its own buffers) and compute().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

#include "convguard/solver.hpp"
#include "core/geometry.hpp"
#include "cpu/staging.hpp"

namespace convguard::cpu {

struct StagingSpec {
  Order activations = Order::channels_first;  // x and y
  Order filter = Order::channels_first;       // [K][Cg][taps] or [K][taps][Cg]
  Padding x_pad;                              // zero padding materialised around x (or dx)
  // The family's vector loops read up to kOverread floats past the end of x: never use the
  // caller's x in place (staged buffers have that slack).
  bool x_overreads = false;
  // y's order when it differs from x's (cpu:bwdw reads channels-first dy as it comes but needs
  // channels-last x).
  std::optional<Order> y_order = std::nullopt;
  // false: nothing is staged; the family reads and writes the caller's tensors itself
  // (StagedTensors::caller), in their own dtype and strides, and x_pad only sizes xs.
  // cpu:bf16_direct packs bf16 straight into its pair layouts and stores bf16 from each output row
  // while it is in cache: staging them as fp32 moved three times the bytes and cost as much as
  // its whole kernel on 1x1 layers (docs/perf.md).
  bool stage = true;
  // With stage: x or y left to the family, which reads the caller's tensor itself in its own
  // dtype (StagedTensors::x or y is then null). cpu:bwdw widens bf16 dy (and a 1x1 layer's x) as
  // it packs each chunk: staging them to fp32 first moved three times their bytes. caller_x only
  // where x needs neither x_pad nor x_overreads (the staged buffer is what would provide them).
  bool caller_x = false, caller_y = false;

  Order y() const { return y_order.value_or(activations); }
};

// Dense fp32 views the family computes on (null when !spec.stage, and x or y when the spec leaves
// it to the family: caller_x, caller_y). x is padded by spec.x_pad. For
// backward-data the solver must write every element of dx's padded buffer it reads back (the
// interior).
struct StagedTensors {
  float* x = nullptr;
  float* w = nullptr;
  float* y = nullptr;
  Sizes5 xs{}, ws{}, ys{};              // x sizes include the padding
  const ConvTensors* caller = nullptr;  // the caller's tensors (all a family has when !stage)
  detail::Geometry geo{};
};

class StagedSolver : public Solver {
 public:
  [[nodiscard]] Result<std::size_t> workspace_bytes(const Problem& p) const final;
  [[nodiscard]] Status run(const Plan& plan, const ConvTensors& t,
                           std::span<std::byte> workspace) const final;

 protected:
  virtual StagingSpec staging(const Problem& p) const = 0;
  // Reserves the family's own scratch buffers in `layout` (after the staging buffers).
  virtual void scratch(const Problem& p, WorkspaceLayout& layout) const;
  [[nodiscard]] virtual Status compute(const Problem& p, const StagedTensors& t,
                                       std::span<std::byte> ws, const WorkspaceLayout& layout,
                                       int first_scratch_slot) const = 0;

 private:
  struct Slots {
    WorkspaceLayout layout;
    int x = -1, w = -1, y = -1;  // -1: the caller's tensor is used in place
    int first_scratch = 0;
  };
  Slots slots(const Problem& p) const;
};

// Zero-padding that makes every window read of the forward pass land inside the buffer.
Padding forward_padding(const Problem& p);

// The product of sizes, or limit + 1 as soon as it would exceed limit (never an overflow): for
// check()s bounding a buffer whose size multiplies problem sizes (huge paddings and strides can
// make such a product wrap to a tiny number while every tensor holds one element).
std::int64_t bounded_product(std::initializer_list<std::int64_t> factors, std::int64_t limit);

// Whether an output of `bytes` is written with non-temporal stores (whole aligned vectors):
// above four times a core's L2. A plain store first reads every line it fills, and an output that
// large has left the core's caches before a consumer reads it; smaller ones stay for the next
// layer. A constant, not derived from the reported L3: a virtual machine reports its host's whole
// L3 (384 MiB on the build machine) and holds a slice of it. Measured in docs/perf.md.
bool streams_output(std::int64_t bytes);

// out[i] = partial[i] + partial[size + i] + ... over `parts` chunks, added in chunk order (the
// chunks are fixed by the problem, so the bits do not depend on the thread count); fp32 into
// f32_out, or rounded once to bf16 bits into bf16_out (the other null).
void add_partials_in_order(const float* partial, std::int64_t parts, std::int64_t size,
                           float* f32_out, std::uint16_t* bf16_out);

// What the bf16 variants that read and write the caller's tensors in place (stage = false) take:
// an AVX512_BF16 CPU, bf16 problems, dense channels-first x and y, a dense filter that is
// channels-first beyond 1x1. Else not_applicable naming what is missing and `fp32_variant`.
[[nodiscard]] Status check_bf16_in_place(const Problem& p, std::string_view fp32_variant);
// The same without the CPU's part: bf16, dense channels-first x and y, a dense filter that is
// channels-first beyond 1x1 (cpu:nchw_gemm:avx512 widens such tensors in place on AVX-512 CPUs
// with BW and VL).
[[nodiscard]] Status check_bf16_layout_in_place(const Problem& p, std::string_view fp32_variant);

}  // namespace convguard::cpu
