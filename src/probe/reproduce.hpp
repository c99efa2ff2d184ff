// The command that reruns one (problem, solver) trial: the CLI prints it in driver output, the
// probe stores it with every result. One definition so both always agree.
#pragma once

#include <string>

namespace convguard::probe {

// `s` quoted for a POSIX shell.
inline std::string shell_quoted(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// "convguard driver --problem '<problem>' -S <solver> -t 1"
inline std::string reproduce_command(const std::string& problem, const std::string& solver) {
  return "convguard driver --problem " + shell_quoted(problem) + " -S " + solver + " -t 1";
}

}  // namespace convguard::probe
