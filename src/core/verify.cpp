#include "convguard/verify.hpp"

#include <fmt/format.h>

#include <cmath>

#include "convguard/reference.hpp"
#include "core/tensor_iter.hpp"

namespace convguard {
namespace {

// The per-element bound's coefficients (verify.hpp): bound_i = a |ref_i| + b M_i.
struct ElementBound {
  double a = 0, b = 0;
  double floor_magnitude = 0;  // M_i is at least this (the output's largest, for non-local errors)
  double at(double ref, double magnitude) const {
    return a * std::fabs(ref) + b * std::max(magnitude, floor_magnitude) + 1e-300;
  }
};

ElementBound element_bound(const Problem& p, const Accuracy& acc) {
  const double L = static_cast<double>(std::max<std::int64_t>(1, p.reduction_length()));
  const double u_out = unit_roundoff(p.dtype);
  ElementBound e;
  e.a = 2.0 * u_out;
  e.b = 2.0 * u_out * std::max(0.0, acc.result_roundings - 1.0) +
        16.0 * acc.error_growth * 0x1p-24 * std::sqrt(L) + 4.0 * acc.operand_roundoff;
  return e;
}

struct Sums {
  double diff2 = 0, ref2 = 0, max_abs = 0, max_ref = 0;
  double tf32_diff2 = 0;
  bool tf32_checked = false;
  std::int64_t checked = 0, non_finite = 0, over_bound = 0;
  double worst_ratio = 0, worst_out = 0, worst_ref = 0, worst_bound = 0;
  std::int64_t worst_index = -1;
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
  // The element's own bound; call after add().
  void bound(std::int64_t index, double out, double ref, double b) {
    if (!std::isfinite(out)) return;
    const double ratio = std::fabs(out - ref) / b;
    if (ratio > 1) ++over_bound;
    if (ratio > worst_ratio) {
      worst_ratio = ratio, worst_index = index, worst_out = out, worst_ref = ref, worst_bound = b;
    }
  }
  void tf32(double out, double ref_tf32) {
    if (!std::isfinite(out)) return;
    tf32_checked = true;
    tf32_diff2 += (out - ref_tf32) * (out - ref_tf32);
  }
};

Verdict judge(const Problem& p, const Sums& s, const Accuracy& acc, FillMode mode, bool sampled) {
  Verdict v;
  v.sampled = sampled;
  v.checked = s.checked;
  v.non_finite = s.non_finite;
  v.max_abs_error = s.max_abs;
  v.over_bound = s.over_bound;
  v.worst_bound_ratio = s.worst_ratio;
  v.rel_error = s.ref2 > 0 ? std::sqrt(s.diff2 / s.ref2) : std::sqrt(s.diff2);
  v.tolerance = tolerance_for(p, acc);
  // Integer data with products of at most 9: every partial sum is exact in fp32 while
  // 9 * L stays below 2^24, and the stored result is exact if the dtype holds it.
  v.exact_required = acc.exact_on_integers && mode == FillMode::integer &&
                     9.0 * static_cast<double>(p.reduction_length()) < 0x1p24 &&
                     s.max_ref <= exact_integer_limit(p.dtype);
  // Only meaningful where the solver's error is above fp32's own noise floor (else both norms
  // are ~0 and their ratio says nothing).
  if (s.tf32_checked && s.diff2 > 0 && std::sqrt(s.diff2) > 0x1p-30 * std::sqrt(s.ref2))
    v.tf32_ratio = std::sqrt(s.tf32_diff2 / s.diff2);
  if (s.non_finite > 0) {
    v.message = fmt::format("{} of {} output elements are NaN/Inf or were never written",
                            s.non_finite, s.checked);
  } else if (v.exact_required && s.max_abs != 0) {
    v.message = fmt::format("integer data must match exactly; max abs error {:.3g}", s.max_abs);
  } else if (s.over_bound > 0) {
    v.message = fmt::format(
        "{} of {} {}elements outside their own error bound (worst: element {}: {:.6g} vs "
        "reference {:.6g}, error {:.3g} > bound {:.3g}); norm error {:.3g}",
        s.over_bound, s.checked, sampled ? "sampled " : "", s.worst_index, s.worst_out, s.worst_ref,
        std::fabs(s.worst_out - s.worst_ref), s.worst_bound, v.rel_error);
  } else if (!(v.rel_error <= v.tolerance)) {
    v.message = fmt::format("{:.3g} > {:.3g}", v.rel_error, v.tolerance);
  } else if (v.tf32_ratio >= 0 && v.tf32_ratio < 0.5) {
    v.message = fmt::format(
        "the output follows TF32-rounded operands (||out - ref_tf32|| = {:.3g} x ||out - ref||): "
        "this solver rounds its fp32 inputs (a TF32 variant must say so in its id)",
        v.tf32_ratio);
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

bool tf32_check_applies(const Problem& p, const Accuracy& acc) {
  return p.dtype == DType::f32 && acc.operand_roundoff == 0;
}

Verdict compare(const Problem& p, const TensorView& out, const std::vector<double>& ref,
                const Accuracy& acc, FillMode mode, const ReferenceExtras& extras) {
  Sums s;
  const DType dt = out.desc.dtype;
  ElementBound eb = element_bound(p, acc);
  if (extras.magnitude && !acc.local_errors) {
    for (double m : *extras.magnitude) eb.floor_magnitude = std::max(eb.floor_magnitude, m);
  }
  const bool tf32 = extras.tf32 && tf32_check_applies(p, acc);
  detail::for_each_element(
      out.desc,
      [&](std::int64_t lin, std::int64_t off) {
        const auto i = static_cast<std::size_t>(lin);
        const double o = load_as_float(out.data, off, dt);
        s.add(o, ref[i]);
        if (extras.magnitude) s.bound(lin, o, ref[i], eb.at(ref[i], (*extras.magnitude)[i]));
        if (tf32) s.tf32(o, (*extras.tf32)[i]);
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
  // The cache holds, per point, the reference, its magnitude and (f32) its TF32-rounded value.
  const bool tf32 = tf32_check_applies(p, acc);
  const std::size_t n = picks.size();
  std::vector<double> got(n), want(n), magnitude(n), want_tf32(n);
  const bool cached = cache && cache->size() == 3 * n;
  if (cached) {
    std::copy(cache->begin(), cache->begin() + static_cast<std::ptrdiff_t>(n), want.begin());
    std::copy(cache->begin() + static_cast<std::ptrdiff_t>(n),
              cache->begin() + static_cast<std::ptrdiff_t>(2 * n), magnitude.begin());
    std::copy(cache->begin() + static_cast<std::ptrdiff_t>(2 * n), cache->end(), want_tf32.begin());
  }
  // Threads only for computing the reference: reading cached points is not worth a team's wake-up.
#pragma omp parallel for schedule(dynamic, 16) if (!cached)
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t rest = picks[i], off = 0;
    for (int k = 4; k >= 0; --k) {
      off += (rest % sh.dims[k]) * sh.strides[k];
      rest /= sh.dims[k];
    }
    got[i] = load_as_float(out.data, off, dt);
    if (!cached) {
      want[i] = reference_at(p, inputs, picks[i]);
      magnitude[i] = reference_at(p, inputs, picks[i], Operands::magnitude);
      want_tf32[i] = p.dtype == DType::f32
                         ? reference_at(p, inputs, picks[i], Operands::tf32_rounded)
                         : want[i];
    }
  }
  if (cache && !cached) {
    cache->assign(want.begin(), want.end());
    cache->insert(cache->end(), magnitude.begin(), magnitude.end());
    cache->insert(cache->end(), want_tf32.begin(), want_tf32.end());
  }
  ElementBound eb = element_bound(p, acc);
  if (!acc.local_errors)
    for (double m : magnitude) eb.floor_magnitude = std::max(eb.floor_magnitude, m);
  Sums s;
  for (std::size_t i = 0; i < n; ++i) {
    s.add(got[i], want[i]);
    s.bound(picks[i], got[i], want[i], eb.at(want[i], magnitude[i]));
    if (tf32) s.tf32(got[i], want_tf32[i]);
  }
  s.non_finite = non_finite;
  return judge(p, s, acc, mode, true);
}

}  // namespace convguard
