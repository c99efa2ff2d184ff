// Seeded test data. Values depend only on (seed, tensor role, logical index), never on the
// layout or strides, so the same seed gives the same logical tensor in every layout, and a run
// can be reproduced from its seed alone.
#pragma once

#include <cstdint>

#include "convguard/tensor.hpp"

namespace convguard {

enum class FillMode {
  uniform,  // uniform in [-1, 1), never all zero
  integer,  // small integers in [-3, 3]: sums are exact in fp32, so direct solvers match exactly
};

enum class TensorRole : std::uint32_t { x = 1, w = 2, y = 3 };

void fill(TensorView t, TensorRole role, std::uint64_t seed, FillMode mode);
// Writes NaN into every byte of the tensor's span so elements a solver forgets to write fail
// verification (and so do writes that land only in gaps of strided tensors).
void poison(TensorView t);

}  // namespace convguard
