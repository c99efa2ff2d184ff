#include "convguard/verify.hpp"

#include <fmt/format.h>

#include <cmath>

#include "convguard/reference.hpp"
#include "core/tensor_iter.hpp"

namespace convguard {
namespace {

struct Sums {
  double diff2 = 0, ref2 = 0, max_abs = 0, max_ref = 0;
  std::int64_t checked = 0, non_finite = 0;
  void add(double out, double ref) {
    ++checked;
    if (!std::isfinite(out)) {
      ++non_finite;
      return;
    }
    const double d = out - ref;
    diff2 += d * d;
    ref2 += ref * ref;
    max_abs = std::max(max_abs, std::fabs(d));
    max_ref = std::max(max_ref, std::fabs(ref));
  }
};

Verdict judge(const Problem& p, const Sums& s, const Accuracy& acc, FillMode mode, bool sampled) {
  Verdict v;
  v.sampled = sampled;
  v.checked = s.checked;
  v.non_finite = s.non_finite;
  v.max_abs_error = s.max_abs;
  v.rel_error = s.ref2 > 0 ? std::sqrt(s.diff2 / s.ref2) : std::sqrt(s.diff2);
  v.tolerance = tolerance_for(p, acc);
  // Integer data with products of at most 9: every partial sum is exact in fp32 while
  // 9 * L stays below 2^24, and the stored result is exact if the dtype holds it.
  v.exact_required = acc.exact_on_integers && mode == FillMode::integer &&
                     9.0 * static_cast<double>(p.reduction_length()) < 0x1p24 &&
                     s.max_ref <= exact_integer_limit(p.dtype);
  if (s.non_finite > 0) {
    v.message = fmt::format("{} of {} output elements are NaN/Inf or were never written",
                            s.non_finite, s.checked);
  } else if (v.exact_required && s.max_abs != 0) {
    v.message = fmt::format("integer data must match exactly; max abs error {:.3g}", s.max_abs);
  } else if (!(v.rel_error <= v.tolerance)) {
    v.message = fmt::format("{:.3g} > {:.3g}", v.rel_error, v.tolerance);
  }
  v.ok = v.message.empty();
  return v;
}

}  // namespace

double tolerance_for(const Problem& p, const Accuracy& acc) {
  // Rounding the result to the storage type (relative u per element, twice for margin), plus
  // fp32 summation error growing like sqrt(L) for random-signed data, scaled by the family's
  // growth (transforms such as Winograd and FFT amplify rounding error).
  const double L = static_cast<double>(std::max<std::int64_t>(1, p.reduction_length()));
  // Operands rounded before multiplying (TF32): independent errors of up to 2 u per product give
  // a norm-relative error near u on random data; 4 u leaves room for less favourable data.
  return 2.0 * acc.result_roundings * unit_roundoff(p.dtype) +
         8.0 * acc.error_growth * 0x1p-24 * std::sqrt(L) + 4.0 * acc.operand_roundoff + 1e-12;
}

Verdict compare(const Problem& p, const TensorView& out, const std::vector<double>& ref,
                const Accuracy& acc, FillMode mode) {
  Sums s;
  const DType dt = out.desc.dtype;
  detail::for_each_element(
      out.desc,
      [&](std::int64_t lin, std::int64_t off) {
        s.add(load_as_float(out.data, off, dt), ref[static_cast<std::size_t>(lin)]);
      },
      false);
  return judge(p, s, acc, mode, false);
}

Verdict compare_sampled(const Problem& p, const TensorView& out, const ConvTensors& inputs,
                        const Accuracy& acc, FillMode mode, std::int64_t samples,
                        std::uint64_t seed, std::vector<double>* cache) {
  const DType dt = out.desc.dtype;
  // Non-finite values (including never-written elements) anywhere in the output.
  std::int64_t non_finite = 0;
  detail::for_each_element(
      out.desc,
      [&](std::int64_t, std::int64_t off) {
        if (!std::isfinite(load_as_float(out.data, off, dt))) ++non_finite;
      },
      false);
  const std::int64_t total = out.desc.elements();
  const detail::Shape5 sh = detail::shape5(out.desc);
  std::vector<std::int64_t> picks(static_cast<std::size_t>(std::min(samples, total)));
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  for (std::size_t i = 0; i < picks.size(); ++i) {
    auto& idx = picks[i];
    if (samples >= total) {  // as many samples as elements: check each once
      idx = static_cast<std::int64_t>(i);
      continue;
    }
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    idx = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(total));
  }
  std::vector<double> got(picks.size()), want(picks.size());
  const bool cached = cache && cache->size() == picks.size();
  if (cached) want = *cache;
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = 0; i < picks.size(); ++i) {
    std::int64_t rest = picks[i], off = 0;
    for (int k = 4; k >= 0; --k) {
      off += (rest % sh.dims[k]) * sh.strides[k];
      rest /= sh.dims[k];
    }
    got[i] = load_as_float(out.data, off, dt);
    if (!cached) want[i] = reference_at(p, inputs, picks[i]);
  }
  if (cache && !cached) *cache = want;
  Sums s;
  for (std::size_t i = 0; i < picks.size(); ++i) s.add(got[i], want[i]);
  s.non_finite = non_finite;
  return judge(p, s, acc, mode, true);
}

}  // namespace convguard
