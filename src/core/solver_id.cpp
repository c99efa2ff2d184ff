#include "core/solver_id.hpp"

#include <fmt/format.h>

#include "core/safe_text.hpp"

namespace convguard {
namespace {

constexpr std::size_t kMaxSolverId = 512;

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_word_char(char c) {
  return is_alnum(c) || c == '_' || c == '.' || c == '-';
}

// A recursive-descent reader over the id; each rule advances pos_ or says why it cannot.
class IdParser {
 public:
  explicit IdParser(std::string_view id) : s_(id) {}

  Status id() {
    if (s_.substr(pos_).starts_with("xform:")) return transform();
    return plain();
  }
  bool at_end() const { return pos_ == s_.size(); }
  std::size_t pos() const { return pos_; }

 private:
  Status fail(std::string_view what) const {
    return invalid_argument(fmt::format("expected {} at byte {}", what, pos_));
  }
  bool take(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status transform() {
    pos_ += 6;  // "xform:"
    const std::size_t name_start = pos_;
    while (pos_ < s_.size() && ((s_[pos_] >= 'a' && s_[pos_] <= 'z') || s_[pos_] == '_')) ++pos_;
    if (pos_ == name_start) return fail("a transform name ([a-z_]+)");
    if (!take('(')) return fail("'(' after the transform name");
    while (pos_ < s_.size() && (is_alnum(s_[pos_]) || std::string_view("_+%,.-").find(s_[pos_]) !=
                                                          std::string_view::npos)) {
      ++pos_;
    }
    if (!take(')')) return fail("')' closing the transform's parameters ([A-Za-z0-9_+%,.-]*)");
    if (!take(':')) return fail("':' before the inner solver id");
    return id();
  }
  Status word() {
    if (pos_ >= s_.size() || !(is_alnum(s_[pos_]) || s_[pos_] == '_'))
      return fail("a name ([A-Za-z0-9_] first)");
    while (pos_ < s_.size() && is_word_char(s_[pos_])) ++pos_;
    return Status::ok();
  }
  Status segment() {
    if (auto st = word(); !st) return st;
    if (!take('<')) return Status::ok();
    const std::size_t start = pos_;
    while (pos_ < s_.size() && ((s_[pos_] >= '0' && s_[pos_] <= '9') || s_[pos_] == '-')) ++pos_;
    if (pos_ == start || !take('>')) return fail("a template argument <[0-9-]+>");
    return Status::ok();
  }
  Status plain() {
    if (auto st = word(); !st) return st;
    if (!take(':')) return fail("':' after the backend (backend:family[:variant...])");
    if (auto st = segment(); !st) return st;
    while (take(':')) {
      if (auto st = segment(); !st) return st;
    }
    return Status::ok();
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Status check_solver_id(std::string_view id) {
  if (id.empty()) return invalid_argument("empty (backend:family[:variant...])");
  if (id.size() > kMaxSolverId)
    return invalid_argument(fmt::format("{} bytes (at most {})", id.size(), kMaxSolverId));
  IdParser p(id);
  if (auto st = p.id(); !st)
    return invalid_argument(fmt::format("'{}': {}", comment_text(id), st.message()));
  if (!p.at_end())
    return invalid_argument(
        fmt::format("'{}': unexpected character at byte {}", comment_text(id), p.pos()));
  return Status::ok();
}

}  // namespace convguard
