// The worker protocol's lines (requests and replies): any bytes decode or are refused; what
// decodes encodes and decodes again to the same fields.
#include "probe/protocol.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace convguard::probe;
  const std::string line(reinterpret_cast<const char*>(data), size);
  if (auto r = decode_request(line)) {
    auto again = decode_request(encode(*r));
    if (!again || again->seq != r->seq || again->problem != r->problem ||
        again->solver != r->solver || again->seed != r->seed)
      __builtin_trap();
  }
  if (auto r = decode_reply(line)) {
    auto again = decode_reply(encode(*r));
    if (!again || again->seq != r->seq || again->status != r->status) __builtin_trap();
  }
  return 0;
}
