// Reading a text file a line at a time, for files a user or another machine hands us (suites,
// model layer lists, evidence to import): a directory, a read error or a line longer than a cap
// is an error naming the file and the line, never "an empty file" or an unbounded allocation.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "convguard/status.hpp"

namespace convguard {

inline constexpr std::size_t kMaxTextLine = std::size_t{1} << 20;  // 1 MiB

// Calls on_line(line, lineno) for each line (without its '\n'); stops at the first error, from the
// file or returned by on_line. A NUL byte in a line is an error too: text never holds one.
[[nodiscard]] Status for_each_line(const std::string& path,
                                   const std::function<Status(const std::string&, int)>& on_line,
                                   std::size_t max_line = kMaxTextLine);

}  // namespace convguard
