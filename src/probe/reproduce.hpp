// The command that reruns one (problem, solver) trial: the CLI prints it in driver output, the
// probe stores it with every result. One definition so both always agree.
#pragma once

#include <string>

#include "core/safe_text.hpp"

namespace convguard::probe {

// The driver command that reruns one trial (`device` other than "cpu" is named).
inline std::string reproduce_command(const std::string& problem, const std::string& solver,
                                     const std::string& device = "cpu") {
  return "convguard driver --problem " + shell_quoted(problem) + " -S " + shell_quoted(solver) +
         (device == "cpu" ? "" : " --device " + shell_quoted(device)) + " -t 1";
}

}  // namespace convguard::probe
