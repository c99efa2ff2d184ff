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

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    // The length a lead byte announces and the range its second byte must lie in (RFC 3629's
    // table: it excludes overlong forms, surrogates and code points past U+10FFFF).
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
      n = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      n = 2;
    else if (c == 0xE0)
      n = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC)
      n = 3;
    else if (c == 0xED)
      n = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF)
      n = 3;
    else if (c == 0xF0)
      n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      n = 4;
    else if (c == 0xF4)
      n = 4, hi = 0x8F;
    bool ok = n > 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const unsigned char lower = k == 1 ? lo : 0x80, upper = k == 1 ? hi : 0xBF;
      ok = b(i + k) >= lower && b(i + k) <= upper;
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
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
