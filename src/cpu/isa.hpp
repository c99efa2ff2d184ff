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
// The copies of a kernel family that has fp32 copies for AVX-512 and AVX2 and a bf16 one for
// AVX512_BF16 (cpu:fwd_rows, cpu:bwdd_rows, cpu:bwdw_rows, cpu:bwdw_gemm); isa_of: the ISA its
// solver requires (bf16 checks AVX512_BF16 on top).
enum class KernelCopy { f32_avx512, f32_avx2, bf16_avx512 };
inline Isa isa_of(KernelCopy copy) {
  return copy == KernelCopy::f32_avx2 ? Isa::avx2 : Isa::avx512;
}
// The one of three things (an id, an entry point) that belongs to `copy`.
template <class T>
T by_copy(KernelCopy copy, T f32_avx512, T f32_avx2, T bf16_avx512) {
  return copy == KernelCopy::f32_avx512 ? f32_avx512
         : copy == KernelCopy::f32_avx2 ? f32_avx2
                                        : bf16_avx512;
}

IsaLevel isa_level();
// ok when $CONVGUARD_CPU_ISA is unset, empty or a level; else an error naming the variable.
[[nodiscard]] Status check_isa_variable();
const char* to_string(IsaLevel l);
// ok when isa_level() allows `isa`; else not_applicable saying what it needs and what is allowed.
[[nodiscard]] Status require_isa(Isa isa);
// ok when the ISA cap allows AVX-512 and CPUID reports AMX-TILE and AMX-BF16 (tdpbf16ps), and
// AVX512_BF16, BW and VL (the code around the tiles); else not_applicable saying which is
// missing. Asks nothing of Linux.
[[nodiscard]] Status require_amx_bf16_cpu();
// ok when Linux granted this process the AMX tile data state (arch_prctl ARCH_REQ_XCOMP_PERM,
// asked once: without it the first tile instruction faults); else not_applicable. Asking enlarges
// the process's signal frames: call it only where AMX will be used.
[[nodiscard]] Status request_amx_tile_state();

}  // namespace convguard::cpu
