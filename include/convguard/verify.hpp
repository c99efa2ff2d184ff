// Verification against the fp64 reference: norm-relative error (||out-ref||2 / ||ref||2) and
// max absolute error, with a tolerance from the storage type, the reduction length and how
// much error the solver family's arithmetic adds. NaN/Inf and unwritten (poisoned) elements
// fail. Under integer fills, solvers that only add products (direct, GEMM) must match exactly.
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
};

struct Verdict {
  bool ok = false;
  double rel_error = 0;  // ||out - ref||2 / ||ref||2
  double max_abs_error = 0;
  double tolerance = 0;         // on rel_error
  std::int64_t checked = 0;     // output elements compared
  std::int64_t non_finite = 0;  // NaN/Inf (includes never-written elements)
  bool exact_required = false;
  bool sampled = false;
  std::string message;  // empty when ok
};

double tolerance_for(const Problem& p, const Accuracy& acc);

// Compares every output element against a full reference result (dense logical order).
Verdict compare(const Problem& p, const TensorView& out, const std::vector<double>& ref,
                const Accuracy& acc, FillMode mode);

// Compares `samples` pseudo-random output elements against reference_at (for problems too
// large for a full fp64 reference); non-finite values are checked over the whole output. The
// points depend only on (p, samples, seed): `cache`, when given, keeps their reference values so
// the next solver checked on the same inputs does not recompute them.
Verdict compare_sampled(const Problem& p, const TensorView& out, const ConvTensors& inputs,
                        const Accuracy& acc, FillMode mode, std::int64_t samples,
                        std::uint64_t seed, std::vector<double>* cache = nullptr);

}  // namespace convguard
