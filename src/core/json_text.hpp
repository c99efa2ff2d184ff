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
