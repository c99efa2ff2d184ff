#include "cpu/solvers/bwdw.hpp"

#include <fmt/format.h>

#include "cpu/solvers/bwdw_entry.hpp"

namespace convguard::cpu {
namespace {

// Which of the caller's tensors are channels-first (the kernels can read or write those as
// they are, in some shapes: bwdw_entry.hpp).
bwdw::CallerLayout caller_layout(const Problem& p) {
  return {p.x_layout == Layout::nchw && !is_packed_f32(x_desc(p), Order::channels_last),
          p.w_layout == Layout::nchw && !is_packed_f32(w_desc(p), Order::channels_last)};
}

bwdw::Shape shape_of(const Problem& p, Isa isa) {
  return bwdw::shape(detail::geometry(p), lanes(isa), caller_layout(p));
}

// bf16 from dense channels-first x and dy: the kernels widen dy (read channels-first anyway) and
// a 1x1 layer's unpadded x (packed per chunk anyway) as they pack each chunk, instead of staging
// them to fp32 (on CPUs without AVX512_BF16 this family is bf16's backward-weights path).
bool widens_bf16(const Problem& p) {
  return p.dtype == DType::bf16 && check_bf16_layout_in_place(p, "").is_ok();
}
constexpr std::int64_t kMaxWidenings = 2;

}  // namespace

std::string_view BwdwSolver::id() const {
  return isa_ == Isa::avx512 ? "cpu:bwdw:avx512" : "cpu:bwdw:avx2";
}

Status BwdwSolver::check(const Problem& p) const {
  if (auto s = validate(p); !s) return s;
  if (auto s = require_isa(isa_); !s) return s;
  if (p.direction != Direction::backward_weights) {
    return not_applicable(
        "backward-weights only (forward and backward-data: cpu:implicit_gemm, cpu:direct)");
  }
  // The vector dimension is the x span one pixel multiplies at a tap (bwdw_entry.hpp): below a
  // quarter of a vector most lanes idle (depthwise and tiny groups: cpu:depthwise, cpu:direct).
  const bwdw::Shape s = shape_of(p, isa_);
  if (s.m < lanes(isa_) / 4) {
    return not_applicable(
        fmt::format("vectorises over the {} input values a pixel multiplies per tap ({}); too few "
                    "for {} lanes",
                    s.m, s.wide ? "filter width x channels" : "channels per group", lanes(isa_)));
  }
  return Status::ok();
}

StagingSpec BwdwSolver::staging(const Problem& p) const {
  // The tiles read up to 2 vectors past the end of x when m is not a multiple of 2 vectors
  // (bwdw_kernels.hpp); otherwise dense NHWC fp32 x without padding (1x1 layers) is used in place.
  const bwdw::Shape s = shape_of(p, isa_);
  StagingSpec spec{s.channels_first ? Order::channels_first : Order::channels_last,
                   s.w_channels_first ? Order::channels_first : Order::channels_last,
                   forward_padding(p), !s.channels_first && s.m % (s.nv * lanes(isa_)) != 0};
  if (s.dy_channels_first) spec.y_order = Order::channels_first;
  if (widens_bf16(p)) {
    // Widened once per m block (dy) or k block (x): where there are many (res5's 2048-channel
    // 1x1 layers have 16 m blocks) one fp32 copy costs less.
    const std::int64_t kblocks = (p.k / p.g + s.kblock - 1) / s.kblock;
    spec.caller_y = s.dy_channels_first && (s.m + s.mblock - 1) / s.mblock <= kMaxWidenings;
    spec.caller_x = s.channels_first && !spec.x_pad.any() && kblocks <= kMaxWidenings;
  }
  return spec;
}

void BwdwSolver::scratch(const Problem& p, WorkspaceLayout& layout) const {
  const bwdw::Shape s = shape_of(p, isa_);
  layout.add(s.slices > 1 ? s.slices * w_desc(p).elements() : 0);
}

Status BwdwSolver::compute(const Problem& p, const StagedTensors& t, std::span<std::byte> ws,
                           const WorkspaceLayout& layout, int first_scratch) const {
  float* partials = layout.get(ws, first_scratch);
  if (isa_ == Isa::avx512)
    bwdw::run_avx512(t.geo, t, partials, caller_layout(p));
  else
    bwdw::run_avx2(t.geo, t, partials, caller_layout(p));
  return Status::ok();
}

}  // namespace convguard::cpu
