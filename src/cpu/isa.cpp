#include "cpu/isa.hpp"

#include <cstdlib>
#include <string>

namespace convguard::cpu {

IsaLevel isa_level() {
  IsaLevel have = IsaLevel::baseline;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) have = IsaLevel::avx2;
  if (have == IsaLevel::avx2 && __builtin_cpu_supports("avx512f")) have = IsaLevel::avx512;
  if (const char* cap = std::getenv("CONVGUARD_CPU_ISA")) {
    const std::string c = cap;
    IsaLevel limit = have;
    if (c == "baseline")
      limit = IsaLevel::baseline;
    else if (c == "avx2")
      limit = IsaLevel::avx2;
    else if (c == "avx512")
      limit = IsaLevel::avx512;
    if (limit < have) have = limit;
  }
  return have;
}

const char* to_string(IsaLevel l) {
  switch (l) {
    case IsaLevel::baseline:
      return "baseline";
    case IsaLevel::avx2:
      return "avx2";
    case IsaLevel::avx512:
      return "avx512";
  }
  return "?";
}

}  // namespace convguard::cpu
