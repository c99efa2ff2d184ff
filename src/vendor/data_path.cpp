#include "vendor/data_path.hpp"

#include <cstdlib>

namespace convguard {

std::string data_path(std::string_view relative) {
  const char* dir = std::getenv("CONVGUARD_DATA_DIR");
  return std::string(dir && *dir ? dir : CONVGUARD_DATA_DIR) + "/" + std::string(relative);
}

}  // namespace convguard
