// A trial record as one JSON object: what `db export` writes and `db import`/`merge` read (and
// what the import fuzzer feeds). Reading checks every field by the database's grammar
// (db/fields.hpp); an error names the field.
#pragma once

#include <nlohmann/json.hpp>

#include "convguard/status.hpp"
#include "db/store.hpp"

namespace convguard::db {

nlohmann::json to_json(const TrialRecord& t);
// One record from one JSON value. Unknown keys are ignored (a newer exporter may add some).
[[nodiscard]] Result<TrialRecord> from_json(const nlohmann::json& j);

}  // namespace convguard::db
