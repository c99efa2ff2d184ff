#include "convguard/status.hpp"

namespace convguard {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::ok:
      return "ok";
    case StatusCode::invalid_argument:
      return "invalid_argument";
    case StatusCode::not_applicable:
      return "not_applicable";
    case StatusCode::out_of_memory:
      return "out_of_memory";
    case StatusCode::io_error:
      return "io_error";
    case StatusCode::device_error:
      return "device_error";
    case StatusCode::internal_error:
      return "internal_error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(convguard::to_string(code_)) + ": " + message_;
}

}  // namespace convguard
