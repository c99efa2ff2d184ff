// Dense fp32 staging for the CPU solvers. Solvers compute in fp32 on packed buffers in the
// order their loops want (channels first or last), with zero padding materialised where that
// removes bounds checks; these functions convert from/to the caller's dtype, layout and strides.
// When the caller's tensor already is the packed fp32 buffer a solver wants, it is used in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "convguard/problem.hpp"
#include "core/geometry.hpp"

namespace convguard::cpu {

enum class Order { channels_first, channels_last };

struct Padding {
  std::int64_t begin[3] = {0, 0, 0};
  std::int64_t end[3] = {0, 0, 0};
  // Any zero to materialise at either end of any axis.
  bool any() const {
    for (int d = 0; d < 3; ++d)
      if (begin[d] || end[d]) return true;
    return false;
  }
};

// The staging copies and sums run in a parallel region only from this many elements: below it a
// region's fork and join (2.6 us on 2 threads of a Zen 5 VM) cost more than the work they share
// (a first layer's x is 3 x 34 x 34 at 32 x 32, its dW 1728 floats).
constexpr std::int64_t kParallelFromElements = std::int64_t{1} << 15;

// Logical 5D sizes (N, C, D, H, W) of an activation or (K, Cg, D, R, S) of a filter.
struct Sizes5 {
  std::int64_t n, c, d, h, w;
  std::int64_t elements() const { return n * c * d * h * w; }
  bool operator==(const Sizes5&) const = default;
};
Sizes5 sizes5(const TensorDesc& t);
Sizes5 padded(const Sizes5& s, const Padding& p);

// Packs `src` (any dtype, strides) into dst as dense fp32 in `order`, zero-padded.
void pack(const TensorView& src, Order order, const Padding& pad, float* dst);
// Writes the interior of dense fp32 `src` (in `order`, padded by `pad`) into `dst`.
void unpack(const float* src, Order order, const Padding& pad, const TensorView& dst);
// Channels-first x (sizes s, fp32 or bf16 bits) zero-padded by `pad` to xs and split into `step`
// column phases: phase ph's column q is the padded x's column q * step + ph, zero past its width
// (column_phase_width(xs, step) columns a phase). step 1 is the plain padded copy. Serves
// cpu:bwdw_rows (strided columns as contiguous runs) and cpu:nchw_gemm's bf16 x.
std::int64_t column_phase_width(const Sizes5& xs, std::int64_t step);
void pad_column_phases(const float* x, const Sizes5& s, const Padding& pad, const Sizes5& xs,
                       std::int64_t step, float* to);
void pad_column_phases(const std::uint16_t* x, const Sizes5& s, const Padding& pad,
                       const Sizes5& xs, std::int64_t step, std::uint16_t* to);
// True when t is dense fp32 in `order` (no padding), so it can be used without a copy.
bool is_packed_f32(const TensorDesc& t, Order order);

// Carves one workspace into named float buffers; the same layout object sizes the workspace
// (workspace_bytes) and hands out the pointers (run), so the two cannot disagree.
class WorkspaceLayout {
 public:
  // Reserves `floats` floats (64-byte aligned); returns the slot number.
  int add(std::int64_t floats);
  std::size_t bytes() const { return total_; }
  float* get(std::span<std::byte> ws, int slot) const;

 private:
  std::vector<std::size_t> offsets_;
  std::size_t total_ = 0;
};

// Extra floats allocated after packed buffers so vector loops may read a little past the end.
inline constexpr std::int64_t kOverread = 1024;

}  // namespace convguard::cpu
