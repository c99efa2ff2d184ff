#include "cpu/isa.hpp"

#include <cpuid.h>
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace convguard::cpu {

namespace {
// The cap $CONVGUARD_CPU_ISA names; nullopt when unset, empty or not a level.
std::optional<IsaLevel> isa_cap() {
  const char* cap = std::getenv("CONVGUARD_CPU_ISA");
  const std::string c = cap ? cap : "";
  for (IsaLevel l : {IsaLevel::baseline, IsaLevel::avx2, IsaLevel::avx512})
    if (c == to_string(l)) return l;
  return std::nullopt;
}
}  // namespace

IsaLevel isa_level() {
  IsaLevel have = IsaLevel::baseline;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) have = IsaLevel::avx2;
  if (have == IsaLevel::avx2 && __builtin_cpu_supports("avx512f")) have = IsaLevel::avx512;
  if (const auto limit = isa_cap(); limit && *limit < have) have = *limit;
  return have;
}

Status check_isa_variable() {
  const char* cap = std::getenv("CONVGUARD_CPU_ISA");
  if (!cap || !*cap || isa_cap()) return Status::ok();
  return invalid_argument(fmt::format(
      "environment variable CONVGUARD_CPU_ISA: '{}' is not baseline, avx2 or avx512", cap));
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

Status require_isa(Isa isa) {
  const IsaLevel have = isa_level();
  const bool wide = isa == Isa::avx512;
  if (have >= (wide ? IsaLevel::avx512 : IsaLevel::avx2)) return Status::ok();
  return not_applicable(
      fmt::format("needs {}+FMA; the CPU backend may use {} (CPU, CONVGUARD_CPU_ISA)",
                  wide ? "AVX-512F" : "AVX2", to_string(have)));
}

Status require_amx_bf16_cpu() {
  if (auto s = require_isa(Isa::avx512); !s) return s;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool leaf7 = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;  // CPUID.(7,0):EDX
  if (!leaf7 || (edx & (kAmxBf16 | kAmxTile)) != (kAmxBf16 | kAmxTile))
    return not_applicable(
        "needs AMX-TILE and AMX-BF16, which this CPU does not have (Intel Sapphire Rapids or "
        "later)");
  // The packing and stores around the tiles (bf16_direct_avx512.cpp) and backward-weights'
  // fallback for Inf or NaN in x use AVX512_BF16, BW and VL: every AMX CPU has them, a VM's
  // masked CPUID may not.
  if (!__builtin_cpu_supports("avx512bf16") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl"))
    return not_applicable(
        "needs AVX512_BF16, BW and VL next to AMX, which this CPU does not have (a masked "
        "CPUID?)");
  return Status::ok();
}

Status request_amx_tile_state() {
  // Linux hands out the 8 KiB tile state only on request; the answer holds for the process.
  static const long granted = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata);
  }();
  if (granted != 0)
    return not_applicable(
        "the CPU has AMX but Linux did not grant the tile state to this process (arch_prctl "
        "ARCH_REQ_XCOMP_PERM failed: kernel before 5.16 or AMX disabled)");
  return Status::ok();
}

}  // namespace convguard::cpu
