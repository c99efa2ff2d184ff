// A table-driven flag parser shaped like MIOpenDriver's: every flag has a one-character short
// form and a long form, takes a value (unless it is a switch), and has a default. CLI11 cannot
// express MIOpenDriver's short flags ('-!', '-@', '-$', '-#', '-^', '-_'), and the driver must
// accept those verbatim, so all subcommands share this small parser.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convguard/status.hpp"

namespace convguard::cli {

struct FlagSpec {
  char short_name;        // 0 when the flag only has a long form
  std::string long_name;  // without the leading "--"
  std::string default_value;
  std::string help;
  bool is_switch = false;   // takes no value ("--json")
  bool repeatable = false;  // values accumulate
};

class Flags {
 public:
  explicit Flags(std::vector<FlagSpec> specs) : specs_(std::move(specs)) {}
  // Parses argv[first..argc); positional arguments are collected in order.
  [[nodiscard]] Status parse(int argc, char** argv, int first);

  bool given(const std::string& long_name) const { return values_.count(long_name) > 0; }
  std::string str(const std::string& long_name) const;
  std::vector<std::string> all(const std::string& long_name) const;
  // Integer value, or an error naming the flag.
  [[nodiscard]] Result<std::int64_t> integer(const std::string& long_name) const;
  // Integer in [lo, hi], or an error naming the flag and the range. Every count, size and index a
  // flag sets goes through a range: a value that does not fit where it goes (an int, a size the
  // problem's arithmetic can hold) is refused, never wrapped.
  [[nodiscard]] Result<std::int64_t> integer_in(const std::string& long_name, std::int64_t lo,
                                                std::int64_t hi) const;
  // A finite number in [lo, hi]: inf and nan would switch protections (deadlines, budgets) off.
  [[nodiscard]] Result<double> number_in(const std::string& long_name, double lo, double hi) const;
  bool on(const std::string& long_name) const { return given(long_name); }
  const std::vector<std::string>& positional() const { return positional_; }
  std::string usage() const;
  // "-H (--in_h)"
  std::string name_of(const std::string& long_name) const;

 private:
  const FlagSpec* find_short(char c) const;
  const FlagSpec* find_long(const std::string& s) const;
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace convguard::cli
