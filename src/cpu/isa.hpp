// The widest x86 vector ISA the CPU backend may use: what the CPU supports, capped by the
// environment variable CONVGUARD_CPU_ISA=baseline|avx2|avx512 (unknown values are ignored). The
// cap lets tests verify every per-ISA build of a kernel on one machine, and lets users avoid
// AVX-512 (e.g. for its frequency drop).
#pragma once

namespace convguard::cpu {

enum class IsaLevel { baseline = 0, avx2 = 1, avx512 = 2 };

IsaLevel isa_level();
const char* to_string(IsaLevel l);

}  // namespace convguard::cpu
