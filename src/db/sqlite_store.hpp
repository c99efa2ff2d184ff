// The embedded store: one SQLite file (WAL), written by one probe at a time (its lock file).
#pragma once

#include <memory>
#include <string>

#include "db/store.hpp"

namespace convguard::db {

// Opens (creating directories and the schema as needed) and migrates the file at `path`.
[[nodiscard]] Result<std::unique_ptr<Store>> open_sqlite(const std::string& path);

}  // namespace convguard::db
