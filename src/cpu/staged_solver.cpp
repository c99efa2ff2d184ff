#include "cpu/staged_solver.hpp"

#include <string>

#include "convguard/dtype.hpp"

namespace convguard::cpu {

Padding forward_padding(const Problem& p) {
  Padding pad;
  for (int d = 0; d < 3; ++d) {
    pad.begin[d] = p.pad_begin[d];
    // Only as much end padding as the last window reads (a floor in the output size may
    // leave some of the declared padding unread).
    const std::int64_t need =
        (p.output(d) - 1) * p.stride[d] + p.filter_extent(d) - p.input[d] - p.pad_begin[d];
    pad.end[d] = std::max<std::int64_t>(0, need);
  }
  return pad;
}

std::int64_t bounded_product(std::initializer_list<std::int64_t> factors, std::int64_t limit) {
  std::int64_t product = 1;
  for (const std::int64_t f : factors)
    product = f > 0 && product > limit / f ? limit + 1 : product * f;
  return product;
}

bool streams_output(std::int64_t bytes) {
  return bytes > (std::int64_t{4} << 20);
}

void add_partials_in_order(const float* partial, std::int64_t parts, std::int64_t size,
                           float* f32_out, std::uint16_t* bf16_out) {
#pragma omp parallel for if (size * parts >= kParallelFromElements)
  for (std::int64_t i = 0; i < size; ++i) {
    float sum = partial[i];
    for (std::int64_t c = 1; c < parts; ++c) sum += partial[c * size + i];
    if (bf16_out)
      bf16_out[i] = float_to_bfloat(sum);
    else
      f32_out[i] = sum;
  }
}

Status check_bf16_in_place(const Problem& p, std::string_view fp32_variant) {
  // AVX512BW and VL: the 16-bit masked loads and 256-bit masked stores of the bf16 kernels
  // (every CPU with AVX512_BF16 has them, but a capped or emulated CPUID may not say so).
  if (!__builtin_cpu_supports("avx512bf16") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl"))
    return not_applicable(
        "needs AVX512_BF16 (vdpbf16ps) with AVX512BW and VL, which this CPU does not have");
  return check_bf16_layout_in_place(p, fp32_variant);
}

Status check_bf16_layout_in_place(const Problem& p, std::string_view fp32_variant) {
  if (p.dtype != DType::bf16)
    return not_applicable("bf16 problems only (fp32: " + std::string(fp32_variant) + ")");
  if (p.x_layout != Layout::nchw || p.y_layout != Layout::nchw || !p.x_strides.empty() ||
      !p.y_strides.empty() || !p.w_strides.empty())
    return not_applicable(
        "bf16 in place needs dense channels-first x and y and a dense filter (channels-last: "
        "cpu:bf16_direct; else " +
        std::string(fp32_variant) + " on fp32 staging)");
  // A dense 1x1 filter is [K][Cg] in either layout.
  if (p.filter != Dims3{1, 1, 1} && p.w_layout != Layout::nchw)
    return not_applicable("bf16 in place needs a channels-first filter beyond 1x1");
  return Status::ok();
}

void StagedSolver::scratch(const Problem&, WorkspaceLayout&) const {}

StagedSolver::Slots StagedSolver::slots(const Problem& p) const {
  const StagingSpec spec = staging(p);
  Slots s;
  const TensorDesc xd = x_desc(p), wd = w_desc(p), yd = y_desc(p);
  if (spec.stage) {
    if (!spec.caller_x &&
        (spec.x_pad.any() || spec.x_overreads || !is_packed_f32(xd, spec.activations)))
      s.x = s.layout.add(padded(sizes5(xd), spec.x_pad).elements() + kOverread);
    if (!is_packed_f32(wd, spec.filter)) s.w = s.layout.add(wd.elements() + kOverread);
    if (!spec.caller_y && !is_packed_f32(yd, spec.y()))
      s.y = s.layout.add(yd.elements() + kOverread);
  }
  // Slot numbers of the scratch buffers follow the staging slots.
  s.first_scratch = (s.x >= 0) + (s.w >= 0) + (s.y >= 0);
  scratch(p, s.layout);
  return s;
}

Result<std::size_t> StagedSolver::workspace_bytes(const Problem& p) const {
  if (auto st = check(p); !st) return st;
  return slots(p).layout.bytes();
}

Status StagedSolver::run(const Plan& plan, const ConvTensors& t, std::span<std::byte> ws) const {
  const Problem& p = plan.problem;
  const StagingSpec spec = staging(p);
  const Slots s = slots(p);
  if (ws.size() < s.layout.bytes()) {
    return {StatusCode::invalid_argument, "workspace: " + std::to_string(ws.size()) +
                                              " bytes given, " + std::to_string(s.layout.bytes()) +
                                              " needed"};
  }
  StagedTensors st;
  st.geo = detail::geometry(p);
  st.xs = padded(sizes5(t.x.desc), spec.x_pad);
  st.ws = sizes5(t.w.desc);
  st.ys = sizes5(t.y.desc);
  const Padding none;
  st.caller = &t;
  const auto view = [&](int slot, const TensorView& v, bool left_to_family) -> float* {
    if (slot >= 0) return s.layout.get(ws, slot);
    return spec.stage && !left_to_family ? static_cast<float*>(v.data) : nullptr;
  };
  st.x = view(s.x, t.x, spec.caller_x);
  st.w = view(s.w, t.w, false);
  st.y = view(s.y, t.y, spec.caller_y);
  if (!p.writes_x() && s.x >= 0) pack(t.x, spec.activations, spec.x_pad, st.x);
  if (!p.writes_w() && s.w >= 0) pack(t.w, spec.filter, none, st.w);
  if (!p.writes_y() && s.y >= 0) pack(t.y, spec.y(), none, st.y);
  if (auto r = compute(p, st, ws, s.layout, s.first_scratch); !r) return r;
  if (p.writes_x() && s.x >= 0) unpack(st.x, spec.activations, spec.x_pad, t.x);
  if (p.writes_w() && s.w >= 0) unpack(st.w, spec.filter, none, t.w);
  if (p.writes_y() && s.y >= 0) unpack(st.y, spec.y(), none, t.y);
  return Status::ok();
}

}  // namespace convguard::cpu
