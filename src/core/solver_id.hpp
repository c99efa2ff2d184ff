// The grammar of solver ids, in one place: the plugin loader refuses a plugin whose ids break it,
// and the results database (db/fields.hpp) checks every id it stores or turns into a shell
// profile, so an id is always a name and never text that a shell or a comment would misread.
#pragma once

#include <string_view>

#include "convguard/status.hpp"

namespace convguard {

// A solver id:
//   id        := transform | plain
//   transform := "xform:" name "(" params ")" ":" id        e.g. xform:tile(32x32):cpu:direct
//   plain     := word ":" segment (":" segment)*            e.g. cpu:winograd:f2x2_3x3
//   segment   := word [ "<" [0-9-]+ ">" ]                    e.g. miopen:ConvOclBwdWrW2<16>
//   word      := [A-Za-z0-9_] [A-Za-z0-9_.-]*
//   name      := [a-z_]+          params := [A-Za-z0-9_+%,.-]*
// at most 512 bytes. The message says what is wrong and where.
[[nodiscard]] Status check_solver_id(std::string_view id);

}  // namespace convguard
