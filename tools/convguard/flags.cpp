#include "flags.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace convguard::cli {

const FlagSpec* Flags::find_short(char c) const {
  for (const auto& s : specs_)
    if (s.short_name == c) return &s;
  return nullptr;
}
const FlagSpec* Flags::find_long(const std::string& n) const {
  for (const auto& s : specs_)
    if (s.long_name == n) return &s;
  return nullptr;
}

std::string Flags::name_of(const std::string& long_name) const {
  const FlagSpec* s = find_long(long_name);
  if (s && s->short_name) return fmt::format("-{} (--{})", s->short_name, long_name);
  return "--" + long_name;
}

Status Flags::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    const FlagSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      std::string name = a.substr(2);
      if (const auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      spec = find_long(name);
      if (!spec) return invalid_argument(fmt::format("unknown flag '--{}' (see --help)", name));
    } else if (a.size() == 2 && a[0] == '-') {
      spec = find_short(a[1]);
      if (!spec) return invalid_argument(fmt::format("unknown flag '{}' (see --help)", a));
    } else {
      positional_.push_back(a);
      continue;
    }
    std::string value = "1";
    if (!spec->is_switch) {
      if (inline_value) {
        value = *inline_value;
      } else {
        if (i + 1 >= argc)
          return invalid_argument(fmt::format("flag {}: missing value", name_of(spec->long_name)));
        value = argv[++i];
      }
    } else if (inline_value) {
      return invalid_argument(fmt::format("flag --{} takes no value", spec->long_name));
    }
    auto& slot = values_[spec->long_name];
    if (!spec->repeatable) slot.clear();
    slot.push_back(value);
  }
  return Status::ok();
}

std::string Flags::str(const std::string& long_name) const {
  if (const auto it = values_.find(long_name); it != values_.end()) return it->second.back();
  const FlagSpec* s = find_long(long_name);
  return s ? s->default_value : std::string();
}

std::vector<std::string> Flags::all(const std::string& long_name) const {
  if (const auto it = values_.find(long_name); it != values_.end()) return it->second;
  return {};
}

Result<std::int64_t> Flags::integer(const std::string& long_name) const {
  const std::string v = str(long_name);
  std::int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size() || v.empty()) {
    return invalid_argument(fmt::format("flag {}: '{}' is not an integer", name_of(long_name), v));
  }
  return out;
}

Result<std::int64_t> Flags::integer_in(const std::string& long_name, std::int64_t lo,
                                       std::int64_t hi) const {
  auto v = integer(long_name);
  if (!v) return v;
  if (*v < lo || *v > hi) {
    return invalid_argument(
        fmt::format("flag {}: {} is out of range ({} to {})", name_of(long_name), *v, lo, hi));
  }
  return v;
}

Result<double> Flags::number_in(const std::string& long_name, double lo, double hi) const {
  const std::string v = str(long_name);
  double out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size() || v.empty() || !std::isfinite(out)) {
    return invalid_argument(
        fmt::format("flag {}: '{}' is not a finite number", name_of(long_name), v));
  }
  if (out < lo || out > hi) {
    return invalid_argument(
        fmt::format("flag {}: {} is out of range ({} to {})", name_of(long_name), v, lo, hi));
  }
  return out;
}

std::string Flags::usage() const {
  std::string u;
  for (const auto& s : specs_) {
    const std::string shortf = s.short_name ? fmt::format("-{}", s.short_name) : "  ";
    const std::string def =
        s.is_switch || s.default_value.empty() ? "" : fmt::format(" (Default={})", s.default_value);
    u += fmt::format("  --{:<22} {:<3} {}{}\n", s.long_name, shortf, s.help, def);
  }
  return u;
}

}  // namespace convguard::cli
