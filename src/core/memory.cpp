#include "convguard/memory.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace convguard {

namespace {
std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
double gib(std::int64_t b) {
  return static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0);
}
}  // namespace

std::int64_t trial_host_bytes(const Problem& p, const TrialOptions& o) {
  std::int64_t total = 0;
  for (const TensorDesc& d : {x_desc(p), w_desc(p), y_desc(p)}) {
    total = sat_add(total, sat_mul(d.span(), static_cast<std::int64_t>(size_of(d.dtype))));
  }
  if (o.verify && p.flops() / 2 <= o.full_reference_limit) {
    const TensorDesc out = p.direction == Direction::forward         ? y_desc(p)
                           : p.direction == Direction::backward_data ? x_desc(p)
                                                                     : w_desc(p);
    // The reference, its magnitudes and, for f32, its TF32-rounded twin (verify.hpp).
    total = sat_add(total, sat_mul(out.elements(), p.dtype == DType::f32 ? 24 : 16));
  }
  return total;
}

Result<std::int64_t> parse_memory_size(const char* text) {
  const std::string s = text ? text : "";
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (s.empty() || s[0] == '-') throw std::invalid_argument("");
    v = std::stoull(s, &used);
  } catch (const std::exception&) {
    return invalid_argument(fmt::format("memory limit '{}': expected bytes, e.g. 8G or 512M", s));
  }
  int shift = 0;
  const std::string suffix = s.substr(used);
  if (suffix == "K" || suffix == "k")
    shift = 10;
  else if (suffix == "M" || suffix == "m")
    shift = 20;
  else if (suffix == "G" || suffix == "g")
    shift = 30;
  else if (suffix == "T" || suffix == "t")
    shift = 40;
  else if (!suffix.empty())
    return invalid_argument(
        fmt::format("memory limit '{}': unknown suffix '{}' (K, M, G, T)", s, suffix));
  if (v == 0 || v > (static_cast<unsigned long long>(INT64_MAX) >> shift))
    return invalid_argument(fmt::format("memory limit '{}': must be between 1 byte and 8 EiB", s));
  return static_cast<std::int64_t>(v << shift);
}

namespace {
// $CONVGUARD_MEMORY_LIMIT parsed: nullopt when unset or empty, else its value or its error.
std::optional<Result<std::int64_t>> limit_variable() {
  const char* e = std::getenv("CONVGUARD_MEMORY_LIMIT");
  if (!e || !*e) return std::nullopt;
  return parse_memory_size(e);
}
}  // namespace

Status check_memory_limit_variable() {
  const auto v = limit_variable();
  if (!v || *v) return Status::ok();
  return invalid_argument("environment variable CONVGUARD_MEMORY_LIMIT: " + v->status().message());
}

std::int64_t host_memory_limit() {
  if (const auto v = limit_variable(); v && *v) return **v;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:" && kib > 0) return sat_mul(kib, 1024) / 10 * 9;
  }
  return std::int64_t{8} << 30;
}

Status check_host_memory(const Problem& p, const TrialOptions& o) {
  // A limit the user set but mistyped must not silently become 90% of free memory.
  if (auto st = check_memory_limit_variable(); !st) return st;
  const std::int64_t need = trial_host_bytes(p, o), limit = host_memory_limit();
  if (need <= limit) return Status::ok();
  return {StatusCode::out_of_memory,
          fmt::format("the problem's tensors{} need {:.3g} GiB of host memory; the limit is {:.3g} "
                      "GiB (90% of available memory, or CONVGUARD_MEMORY_LIMIT / --memory-limit)",
                      o.verify ? " and reference" : "", gib(need), gib(limit))};
}

}  // namespace convguard
