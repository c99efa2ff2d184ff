// benchdnn's convolution descriptor (the `g1mb1ic3ih44...` token of a problem string) in two
// steps, each its own file:
//   lex  (descriptor_lex.cpp):   text -> the fields the user wrote, nothing derived;
//   rules (descriptor_rules.cpp): written fields -> the problem's shape, by benchdnn's rules
//                                 (tests/benchdnn/conv/conv_aux.cpp str2desc and
//                                 common.cpp sanitize_desc in oneDNN).
// Keeping them apart lets the rules see exactly what was written (a field written as its
// default value is not the same as a field left out when benchdnn copies a dimension).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "convguard/problem.hpp"

namespace convguard::detail {

// The per-dimension quantities of a descriptor, in benchdnn's key letters: i o k s p d.
enum SpatialField { kInput, kOutput, kKernel, kStride, kPad, kDilation, kSpatialFieldCount };

struct WrittenDescriptor {
  std::optional<std::int64_t> g, mb, ic, oc;
  // [field][dim], dim 0..2 = d, h, w. Values as written (never negative: the lexer refuses).
  std::array<std::array<std::optional<std::int64_t>, 3>, kSpatialFieldCount> spatial;
  std::string name;
  std::string text;  // the descriptor as written, for messages
};

// The key a field is written with: key(kStride, 1) == "sh".
std::string key(SpatialField f, int dim);

[[nodiscard]] Status lex_descriptor(std::string_view text, WrittenDescriptor& out);

// Fills p's shape (g, n, c, k, spatial_dims and every spatial field, both paddings) from the
// written fields by benchdnn's rules, or says which written field makes it impossible.
[[nodiscard]] Status apply_descriptor(const WrittenDescriptor& d, Problem& p);

}  // namespace convguard::detail
