// Errors are values. The library never aborts on user input: every fallible call returns a
// Status or a Result<T>, both [[nodiscard]], and the message names the field at fault.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace convguard {

enum class StatusCode {
  ok,
  invalid_argument,  // the caller's input is wrong (names the field / flag / file)
  not_applicable,    // a solver declines a problem (the message is the reason)
  out_of_memory,     // buffers or workspace could not be had
  io_error,          // a file could not be read or written
  internal_error,    // a bug in convguard or a library it loaded
  device_error,      // the device faulted (illegal address, launch failure): its context is lost
};

const char* to_string(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == StatusCode::ok; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: ic: must be positive (got 0)"
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

inline Status invalid_argument(std::string msg) {
  return {StatusCode::invalid_argument, std::move(msg)};
}
inline Status not_applicable(std::string msg) {
  return {StatusCode::not_applicable, std::move(msg)};
}

// A value or the Status saying why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace convguard
