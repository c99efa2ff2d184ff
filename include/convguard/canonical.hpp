// Canonical problem strings in oneDNN benchdnn's convolution grammar, with benchdnn-style
// options in front for what the descriptor itself cannot say:
//
//   [--dir=FWD_D|BWD_D|BWD_W] [--dt=f32|f16|bf16] [--stag=abx|axb] [--wtag=abx|axb]
//   [--dtag=abx|axb] [--strides=SRC:WEI:DST] g1mb1ic3ih44iw44oc64oh44ow44kh3kw3sh1sw1ph1pw1
//
// Descriptor rules: benchdnn's, exactly (docs/problem-strings.md; src/core/descriptor_rules.cpp):
// defaults mb 2, g 1, strides 1, dilation 0 (0-based); a dimension none of whose fields is given
// is absent: w takes all of h's values, h and w take d's when both are absent; only w present
// (1D) is refused. A missing output follows from the padding, a missing padding from the
// output, and the end padding from both (negative when input rows are never read). A written
// field benchdnn would silently replace is refused. Tags: abx = plain channels-first
// (NCHW/NCDHW, filters OIHW), axb = channels-last.
// Strides: one 'x'-separated list per tensor in logical order, e.g. 12288x1x384x3.
//
// print() writes every field except defaults of dilation, options and name, so
// parse(print(p)) == normalized(p) for any validated p (== p when p's end padding is the one its
// output implies).
#pragma once

#include <optional>
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
// The same problem with the end padding its output sizes imply, (o-1)s + ext - i - p, negative
// when input rows are never read (the form the canonical string denotes; padding no window reads
// does not change the result).
Problem normalized(const Problem& p);
// The same convolution with an end padding of at least 0 for APIs that take no negative one
// (vendor libraries): per dimension, pad_begin when that gives the same output size (so a
// symmetric-padding API can take it), else the smallest value >= 0 that does. Any end padding
// in [e, e + stride - 1] for the smallest valid e gives the same output and the same result
// (padding no window reads). nullopt when every such value is negative (input rows beyond the
// last window that even stride - 1 more padding cannot reach: the input would have to shrink).
std::optional<Problem> with_nonnegative_end_padding(const Problem& p);

}  // namespace convguard
