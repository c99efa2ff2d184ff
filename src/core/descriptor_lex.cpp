// Reads the fields a benchdnn convolution descriptor writes, as benchdnn's str2desc scans them:
// keys are matched by prefix at each position, each followed by an integer; '_' separates
// nothing; an 'n' where no key starts begins the name, which runs to the end. Nothing is
// derived here (descriptor_rules.cpp does that).
#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "core/descriptor.hpp"

namespace convguard::detail {
namespace {

constexpr const char* kLetters[3] = {"d", "h", "w"};
constexpr char kFieldLetter[kSpatialFieldCount] = {'i', 'o', 'k', 's', 'p', 'd'};

// The slot a key at the start of `s` writes, and the key's length; 0 when no key starts there.
std::size_t match_key(std::string_view s, WrittenDescriptor& d, std::optional<std::int64_t>*& slot,
                      std::string& key_out) {
  struct Scalar {
    const char* key;
    std::optional<std::int64_t> WrittenDescriptor::*member;
  };
  static constexpr Scalar scalars[] = {{"g", &WrittenDescriptor::g},
                                       {"mb", &WrittenDescriptor::mb},
                                       {"ic", &WrittenDescriptor::ic},
                                       {"oc", &WrittenDescriptor::oc}};
  for (const Scalar& sc : scalars) {
    if (s.starts_with(sc.key)) {
      slot = &(d.*sc.member);
      key_out = sc.key;
      return key_out.size();
    }
  }
  for (int f = 0; f < kSpatialFieldCount; ++f) {
    for (int dim = 0; dim < 3; ++dim) {
      const std::string k = key(static_cast<SpatialField>(f), dim);
      if (s.starts_with(k)) {
        slot = &d.spatial[static_cast<std::size_t>(f)][static_cast<std::size_t>(dim)];
        key_out = k;
        return k.size();
      }
    }
  }
  return 0;
}

}  // namespace

std::string key(SpatialField f, int dim) {
  return std::string(1, kFieldLetter[f]) + kLetters[dim];
}

Status lex_descriptor(std::string_view s, WrittenDescriptor& out) {
  out.text = std::string(s);
  std::size_t i = 0;
  while (i < s.size()) {
    // benchdnn skips one '_' after each step and refuses a second or a leading one; convguard
    // skips any number, which reads every descriptor benchdnn reads the same way.
    if (s[i] == '_') {
      ++i;
      continue;
    }
    std::optional<std::int64_t>* slot = nullptr;
    std::string k;
    const std::size_t len = match_key(s.substr(i), out, slot, k);
    if (len == 0) {
      if (s[i] == 'n') {
        const std::string_view rest = s.substr(i + 1);
        if (rest.starts_with('"')) {
          const auto close = rest.find('"', 1);
          if (close == std::string_view::npos)
            return invalid_argument("name: unterminated n\"...\"");
          if (close + 1 != rest.size())
            return invalid_argument(fmt::format(
                "name: text after the closing quote of n\"...\" in '{}' (the name ends the "
                "descriptor)",
                s));
          out.name = std::string(rest.substr(1, close - 1));
        } else {
          out.name = std::string(rest);  // benchdnn: everything after 'n' is the name
        }
        // The name is printed back as n"...": a '"' in it would end it early, and a control
        // character would end a line of a suite or a report (the fuzzer found the first).
        for (char c : out.name) {
          const auto u = static_cast<unsigned char>(c);
          if (c == '"' || u < 0x20 || u == 0x7f)
            return invalid_argument(fmt::format(
                "name: contains {} (names hold no '\"' and no control characters)",
                c == '"' ? std::string("'\"'") : fmt::format("byte 0x{:02x}", u)));
        }
        return Status::ok();
      }
      std::size_t j = i;
      while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
      if (j == i)
        return invalid_argument(
            fmt::format("problem string: unexpected '{}' at position {} of '{}'", s[i], i, s));
      return invalid_argument(
          fmt::format("problem string: unknown field '{}' in '{}'", s.substr(i, j - i), s));
    }
    i += len;
    // strtol's syntax: an optional sign, then digits.
    const bool negative = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::int64_t value = 0;
    const char* b = s.data() + i;
    const auto [ptr, ec] = std::from_chars(b, s.data() + s.size(), value);
    if (ptr == b) return invalid_argument(fmt::format("{}: expected an integer after '{}' in '{}'", k, k, s));
    if (ec != std::errc() || value > kMaxFieldValue)
      return invalid_argument(fmt::format("{}: {} is out of range (at most 2^40 = {})", k,
                                          std::string_view(b, static_cast<std::size_t>(ptr - b)),
                                          kMaxFieldValue));
    // benchdnn refuses every negative field ("must be positive").
    if (negative && value != 0)
      return invalid_argument(fmt::format("{}: must not be negative (got -{})", k, value));
    i = static_cast<std::size_t>(ptr - s.data());
    // benchdnn keeps the last of repeated keys; a repeat is almost always a slip, so it is
    // refused rather than silently resolved.
    if (slot->has_value()) return invalid_argument(fmt::format("{}: given twice in '{}'", k, s));
    *slot = value;
  }
  return Status::ok();
}

}  // namespace convguard::detail
