// The grammar of what the results database stores, in one place: every path that writes a row
// (the probe's journal, db import/merge) and every reader that turns rows into code (`env`)
// checks fields here, so a hostile or corrupt row is refused by what it is, not by a list of
// known-bad characters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "convguard/status.hpp"
#include "core/solver_id.hpp"

namespace convguard::db {

struct TrialRecord;

// Solver ids: check_solver_id (core/solver_id.hpp), shared with the plugin loader.

// A problem key: the text must parse as a problem string; returns its identity string (the
// canonical form the database keys on, without a name).
[[nodiscard]] Result<std::string> canonical_problem_key(std::string_view text);

// A timestamp as the store writes it: YYYY-MM-DDTHH:MM:SSZ (UTC), a real date and time, and
// not later than now + kClockSkewSeconds (evidence from the future would outrank everything).
inline constexpr std::int64_t kClockSkewSeconds = 300;
[[nodiscard]] Status check_timestamp(std::string_view text);
// Now, in that format.
std::string now_timestamp();

// Where a record comes from: the probe's own journal, or another database's export (which must
// say when its trial finished: that decides which evidence is newer).
enum class Origin { probe, import };

// Every field of a record that is about to be stored: no NUL in any text, a known status, a
// device fingerprint without control characters, a solver id by the grammar, timestamps (when
// set) by check_timestamp and not finished before started. Rewrites r.problem to its canonical
// key. Messages start with the field's name ("solver: ...").
[[nodiscard]] Status check_record(TrialRecord& r, Origin origin = Origin::probe);

}  // namespace convguard::db
