// For harnesses whose reader takes a path (suite files, .npy): the input written to a file of this
// process's own, whose path is returned; empty if it cannot be written.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

inline std::string fuzz_input_file(const char* kind, const std::uint8_t* data, std::size_t size) {
  const std::string path =
      "/tmp/convguard-fuzz-" + std::string(kind) + "-" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return {};
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}
