// JSON text for output. nlohmann's dump() throws (error 316) on a string that is not valid
// UTF-8, and text from evidence often is not (a solver's message, a worker's stderr, a problem
// name given on the command line): one bad byte would lose the whole line or kill a worker.
// Invalid bytes are written as U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace convguard {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace convguard

#include <limits>
#include <stdexcept>
#include <type_traits>

namespace convguard {

// Reads j[key] into `out` by type, for JSON from outside (worker replies, imported evidence):
// integers only from JSON integers within out's range (nlohmann's get<int>() from 7.2e19 is
// undefined behaviour: the fuzzer found it), reals from any number, booleans and strings only from
// their own kinds. An absent key leaves `out` as it is unless required. Throws
// std::invalid_argument naming the key; callers turn that into a status.
template <class T>
void json_field(const nlohmann::json& j, const char* key, T& out, bool required = false) {
  const auto it = j.find(key);
  if (it == j.end()) {
    if (required) throw std::invalid_argument(std::string(key) + ": missing");
    return;
  }
  const nlohmann::json& v = *it;
  auto bad = [&](const char* what) {
    throw std::invalid_argument(std::string(key) + ": " + what);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) bad("not true or false");
    out = v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) bad("out of range");
      out = static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (i < 0) bad("out of range");
      } else {
        if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            i > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
          bad("out of range");
      }
      out = static_cast<T>(i);
    } else {
      bad("not an integer");
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) bad("not a number");
    out = v.get<T>();
  } else {
    if (!v.is_string()) bad("not a string");
    out = v.get<std::string>();
  }
}

}  // namespace convguard
