// Host memory a trial needs, and the limit it must stay under. A problem whose tensors cannot fit
// is refused before anything is allocated, with a message that says how much it needs and what the
// limit is, instead of failing inside an allocation (a crash blamed on the solver) or wrapping.
#pragma once

#include <cstdint>

#include "convguard/status.hpp"
#include "convguard/trial.hpp"

namespace convguard {

// Bytes of host memory a trial of p under o allocates: the three tensors at their memory spans,
// plus the fp64 reference output when it verifies in full. Saturates at INT64_MAX.
std::int64_t trial_host_bytes(const Problem& p, const TrialOptions& o);

// The limit: $CONVGUARD_MEMORY_LIMIT (bytes, or with a K/M/G/T suffix, powers of 1024) when set
// and valid, else 90% of MemAvailable from /proc/meminfo, else 8 GiB. Never 0. An invalid value
// is refused by check_memory_limit_variable(), which the CLI runs before any command and
// check_host_memory() before every trial; it is never taken as "no limit set".
std::int64_t host_memory_limit();
// ok when $CONVGUARD_MEMORY_LIMIT is unset, empty or valid; else an error naming the variable.
[[nodiscard]] Status check_memory_limit_variable();
// Parses a CONVGUARD_MEMORY_LIMIT / --memory-limit value; an error names what is wrong.
[[nodiscard]] Result<std::int64_t> parse_memory_size(const char* text);

// ok, or out_of_memory with "needs X GiB of host memory ...; the limit is Y GiB".
[[nodiscard]] Status check_host_memory(const Problem& p, const TrialOptions& o);

}  // namespace convguard
