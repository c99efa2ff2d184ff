// `db import` lines: any bytes are a valid trial record (by the database's grammar) or refused;
// a record that is accepted exports and imports again unchanged.
#include <cstdint>
#include <string>

#include "db/record_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) return 0;
  auto r = convguard::db::from_json(j);
  if (!r) {
    if (r.status().message().empty()) __builtin_trap();
    return 0;
  }
  auto again = convguard::db::from_json(convguard::db::to_json(*r));
  if (!again || again->problem != r->problem || again->solver != r->solver ||
      again->status != r->status || again->finished_at != r->finished_at)
    __builtin_trap();
  return 0;
}
