// The full fp64 reference, computed a row at a time. Internal to convguard.
//
// reference.cpp's element_at() is the definition of each direction, one output element at a
// time; computed that way a full result is a scalar dependency chain per element (~1 GFLOP/s),
// and verification of problems up to the full-reference limit spent more time in the oracle
// than in the solvers. These loops compute the same sums with the output-width loop innermost
// (independent lanes, vectorisable) and the output row resident in L1. Only the order of the
// fp64 additions differs; tests/test_reference.cpp checks every element against element_at().
#pragma once

#include <vector>

#include "core/geometry.hpp"

namespace convguard::detail {

// `a`, `b`: the direction's two inputs as dense fp64 in logical order (forward: x, w;
// backward-data: dy, w; backward-weights: x, dy). `out`: the output, dense logical order,
// sized by the caller; overwritten.
void reference_rows(Direction dir, const Geometry& G, const std::vector<double>& a,
                    const std::vector<double>& b, std::vector<double>& out);

}  // namespace convguard::detail
