// Problem strings (benchdnn's descriptor grammar plus options): any text either parses or is
// refused with a message; a parsed problem prints canonically and that text parses back to the
// same problem; its memory estimate never overflows.
#include <cstdint>
#include <cstdio>
#include <string>

#include "convguard/canonical.hpp"
#include "convguard/memory.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto p = convguard::parse_problem(text);
  if (!p) {
    if (p.status().message().empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  const std::string canonical = convguard::to_canonical(*p);
  auto q = convguard::parse_problem(canonical);
  if (!q || convguard::to_canonical(*q) != canonical) {
    std::fprintf(stderr, "round trip broke: '%s' -> '%s' -> %s\n", text.c_str(), canonical.c_str(),
                 q ? convguard::to_canonical(*q).c_str() : q.status().message().c_str());
    __builtin_trap();
  }
  if (convguard::trial_host_bytes(*p, convguard::TrialOptions{}) < 0) __builtin_trap();
  return 0;
}
