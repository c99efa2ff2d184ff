// Suite files (one problem string a line, comments): read through the bounded line reader; any
// content is a list of problems or an error naming the line, never a crash or unbounded memory.
#include <cstdint>
#include <cstdio>
#include <string>

#include "convguard/canonical.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz_input_file("suite", data, size);
  if (path.empty()) return 0;
  auto problems = convguard::read_problem_file(path);
  if (!problems && problems.status().message().empty()) __builtin_trap();
  return 0;
}
