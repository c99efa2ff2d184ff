// Verification against the fp64 reference, three ways, all of which must pass:
// - every element against its own bound, from that element's sum of |products| M_i (the
//   reference computed on absolute values): |out_i - ref_i| <= 2 u_out (|ref_i| + (r-1) M_i)
//   + 16 g 2^-24 sqrt(L) M_i + 4 u_op M_i, where u_out is the storage type's unit roundoff, r the
//   result roundings, g the family's error growth, L the reduction length and u_op the operand
//   rounding (TF32). One wrong element, or one wrong tile edge, fails here whatever the size of
//   the output (the norm alone moves by ~1/sqrt(N) per wrong element: in bf16 one was invisible
//   above ~16k elements). The fp32 summation term is the probabilistic bound (lambda sqrt(L) u),
//   not the worst case L u, which at L ~ 1M would allow any value of the right order;
// - the norm-relative error (||out-ref||2 / ||ref||2) against a tolerance from the same terms;
// - for f32 problems and solvers that claim full fp32 operands, whether the output follows the
//   TF32-rounded reference: ||out - ref_tf32|| < 0.5 ||out - ref|| means the solver rounded its
//   operands (a TF32 engine passing as fp32; at long reductions its error is inside the fp32
//   norm tolerance, so only this separates them).
// NaN/Inf and unwritten (poisoned) elements fail. Under integer fills, solvers that only add
// products (direct, GEMM) must match exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "convguard/fill.hpp"
#include "convguard/problem.hpp"

namespace convguard {

// How a solver's arithmetic differs from a plain ordered sum of products.
struct Accuracy {
  bool exact_on_integers = true;  // only sums products: integer data gives exact results
  double error_growth = 1.0;      // multiplier on the fp32 summation error bound
  // Roundings to the storage type the result has been through, in effect (1: the final store;
  // transforms that add parts rounded one by one have more).
  double result_roundings = 1.0;
  // Unit roundoff of a rounding applied to the operands before they are multiplied (0: none;
  // 2^-11 for TF32 tensor cores computing an f32 problem). Each product is off by up to twice it.
  double operand_roundoff = 0.0;
  // Each output's error comes from its own products (direct, GEMM, Winograd: a tile's inputs).
  // False for FFT and for unknown arithmetic (vendor plugins): an FFT spreads rounding error over
  // every output, so per-element bounds use the largest M_i of the output instead of the own one.
  bool local_errors = true;
};

// The reference's companions for per-element checks (dense logical order, like the reference).
struct ReferenceExtras {
  const std::vector<double>* magnitude = nullptr;  // sum of |products| per element
  const std::vector<double>* tf32 = nullptr;       // reference with TF32-rounded operands
};

struct Verdict {
  bool ok = false;
  double rel_error = 0;  // ||out - ref||2 / ||ref||2
  double max_abs_error = 0;
  double tolerance = 0;         // on rel_error
  std::int64_t checked = 0;     // output elements compared
  std::int64_t non_finite = 0;  // NaN/Inf (includes never-written elements)
  std::int64_t over_bound = 0;  // elements outside their own error bound (when checked)
  double worst_bound_ratio = 0;  // max |out_i - ref_i| / bound_i
  double tf32_ratio = -1;        // ||out - ref_tf32|| / ||out - ref||; -1 when not checked
  bool exact_required = false;
  bool sampled = false;
  std::string message;  // empty when ok
};

double tolerance_for(const Problem& p, const Accuracy& acc);

// Compares every output element against a full reference result (dense logical order).
Verdict compare(const Problem& p, const TensorView& out, const std::vector<double>& ref,
                const Accuracy& acc, FillMode mode, const ReferenceExtras& extras = {});

// Whether the TF32 check applies: an f32 problem and a solver that claims unrounded operands.
bool tf32_check_applies(const Problem& p, const Accuracy& acc);

// Compares `samples` pseudo-random output elements against reference_at (for problems too
// large for a full fp64 reference); non-finite values are checked over the whole output. The
// points depend only on (p, samples, seed): `cache`, when given, keeps their reference values so
// the next solver checked on the same inputs does not recompute them.
// The sampled points are checked per element and for TF32 too (their magnitudes and
// TF32-rounded values computed at the points; cached in `cache` after the reference values).
Verdict compare_sampled(const Problem& p, const TensorView& out, const ConvTensors& inputs,
                        const Accuracy& acc, FillMode mode, std::int64_t samples,
                        std::uint64_t seed, std::vector<double>* cache = nullptr);

}  // namespace convguard
