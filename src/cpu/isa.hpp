// The widest x86 vector ISA the CPU backend may use: what the CPU supports, capped by the
// environment variable CONVGUARD_CPU_ISA=baseline|avx2|avx512 (any other value is refused by
// check_isa_variable(), which the CLI runs before any command). The cap lets tests verify every
// per-ISA build of a kernel on one machine, and lets users avoid AVX-512 (its frequency drop).
#pragma once

#include "convguard/status.hpp"

namespace convguard::cpu {

enum class IsaLevel { baseline = 0, avx2 = 1, avx512 = 2 };
// The ISA a per-ISA kernel variant is compiled for (its solver declines on CPUs without it).
enum class Isa { avx512, avx2 };
inline int lanes(Isa isa) {
  return isa == Isa::avx512 ? 16 : 8;
}

IsaLevel isa_level();
// ok when $CONVGUARD_CPU_ISA is unset, empty or a level; else an error naming the variable.
[[nodiscard]] Status check_isa_variable();
const char* to_string(IsaLevel l);
// ok when isa_level() allows `isa`; else not_applicable saying what it needs and what is allowed.
[[nodiscard]] Status require_isa(Isa isa);

}  // namespace convguard::cpu
