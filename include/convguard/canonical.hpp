// Canonical problem strings in oneDNN benchdnn's convolution grammar, with benchdnn-style
// options in front for what the descriptor itself cannot say:
//
//   [--dir=FWD_D|BWD_D|BWD_W] [--dt=f32|f16|bf16] [--stag=abx|axb] [--wtag=abx|axb]
//   [--dtag=abx|axb] [--strides=SRC:WEI:DST] g1mb1ic3ih44iw44oc64oh44ow44kh3kw3sh1sw1ph1pw1
//
// Descriptor rules (benchdnn's): mb defaults to 2, g to 1, s to 1, d (dilation) is 0-based and
// defaults to 0; a missing w-size equals the h-size and, in 3D (any d-field present), a missing
// d-size equals the h-size; a missing output size is computed from the padding; a missing
// padding is computed from a given output size (half the required total, rest at the end),
// otherwise 0. The end padding is implied by the output size: the smallest end padding that
// yields it. Tags: abx = plain channels-first (NCHW/NCDHW, filters OIHW), axb = channels-last.
// Strides: one 'x'-separated list per tensor in logical order, e.g. 12288x1x384x3.
//
// print() writes every field except defaults of dilation, options and name, so
// parse(print(p)) == p for any validated p whose end padding is the smallest for its output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "convguard/problem.hpp"

namespace convguard {

[[nodiscard]] Result<Problem> parse_problem(std::string_view text);
std::string to_canonical(const Problem& p);

// A problem file (a suite): one problem string a line; '#' starts a comment (outside a quoted
// name), blank lines are skipped. Errors: "cannot open 'PATH'" or "PATH:LINE: <parse error>".
[[nodiscard]] Result<std::vector<Problem>> read_problem_file(const std::string& path);
// The canonical string without the name: the problem's identity (database key).
std::string identity_string(const Problem& p);
// The same problem with the smallest end padding that gives the same output sizes (the form
// the canonical string denotes; padding that no output reads does not change the result).
Problem normalized(const Problem& p);

}  // namespace convguard
