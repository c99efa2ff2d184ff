// Where an inner problem's tensor sits inside the caller's tensor. Every transform (tiles, padded
// channels or sizes, relayout, batch and group splits) is a set of inner problems whose tensors
// are gathered from, and scattered back into, the caller's tensors element by element; one map
// per logical dim says which caller index each inner index is, so a single copy routine serves
// them all and the arithmetic of a workaround is only ever the inner solver's.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "convguard/tensor.hpp"

namespace convguard::transforms {

// Per logical dim (N or K, C or C/G, D, H or R, W or S; 2D tensors use a D map of {0}): the
// caller's index of each inner index, or -1. Reading, -1 is a zero (padding); writing, -1 means
// the element is not kept (a halo or a padded channel).
struct IndexMaps {
  std::array<std::vector<std::int64_t>, 5> dim;
};

// Inner index i maps to begin + i while that lies in [lo, hi), else -1.
std::vector<std::int64_t> range_map(std::int64_t length, std::int64_t begin, std::int64_t lo,
                                    std::int64_t hi);
// The identity map over a whole tensor.
IndexMaps identity_maps(const TensorDesc& t);

// inner[i] = caller[map(i)], zero where the map says -1. Same dtype, raw element copies.
void gather(const TensorView& caller, const IndexMaps& m, const TensorView& inner);
// caller[map(i)] = inner[i] where the map is not -1.
void scatter(const TensorView& inner, const IndexMaps& m, const TensorView& caller);
// sum[dense logical index of map(i)] += inner[i] (as double) where the map is not -1; `caller`
// gives the logical dims of `sum`.
void accumulate(const TensorView& inner, const IndexMaps& m, const TensorDesc& caller, double* sum);
// caller[i] = sum[i] rounded to the caller's dtype, for every logical element.
void store_sum(const double* sum, const TensorView& caller);
// Every logical element of `t` set to zero (strided tensors keep their gaps).
void zero(const TensorView& t);

}  // namespace convguard::transforms
