#include "core/safe_text.hpp"

#include <algorithm>
#include <charconv>

namespace convguard {
namespace {

// U+2018..U+201B in UTF-8: E2 80 98..9B.
bool is_unicode_single_quote(std::string_view s, std::size_t i) {
  return i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xE2 &&
         static_cast<unsigned char>(s[i + 1]) == 0x80 &&
         static_cast<unsigned char>(s[i + 2]) >= 0x98 &&
         static_cast<unsigned char>(s[i + 2]) <= 0x9B;
}

}  // namespace

std::string shell_quoted(std::string_view s, Shell shell) {
  std::string r = "'";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (shell) {
      case Shell::bash:
        r += c == '\'' ? std::string_view("'\\''") : std::string_view(&s[i], 1);
        break;
      case Shell::fish:
        if (c == '\'' || c == '\\') r += '\\';
        r += c;
        break;
      case Shell::powershell:
        if (c == '\'') {
          r += "''";
        } else if (is_unicode_single_quote(s, i)) {
          r.append(s.substr(i, 3)).append(s.substr(i, 3));
          i += 2;
        } else {
          r += c;
        }
        break;
    }
  }
  return r + "'";
}

std::string comment_text(std::string_view s) {
  std::string r(s);
  for (char& c : r) {
    if (c < 0x20 || c > 0x7e) c = '?';  // char may be signed: non-ASCII bytes are negative
  }
  return r;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::string utf8_tail(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t start = s.size() - max_bytes;
  // Continuation bytes are 10xxxxxx; at most 3 follow a lead byte.
  for (int i = 0;
       i < 3 && start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80; ++i) {
    ++start;
  }
  return std::string(s.substr(start));
}

std::optional<long> digits_only(std::string_view s, long max) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

}  // namespace convguard
