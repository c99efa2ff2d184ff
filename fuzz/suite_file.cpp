// Suite files (one problem string a line, comments): read through the bounded line reader; any
// content is a list of problems or an error naming the line, never a crash or unbounded memory.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "convguard/canonical.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/convguard-fuzz-suite-" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto problems = convguard::read_problem_file(path);
  if (!problems && problems.status().message().empty()) __builtin_trap();
  return 0;
}
