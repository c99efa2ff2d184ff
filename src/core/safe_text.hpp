// Text that came from evidence (a results database, an imported file, a solver's stderr) made
// safe for the place it is written to. Evidence is data: it must never become code in a shell
// profile, a reproduce command or a comment, so every value is quoted by the rules of the shell
// that reads it and every comment is reduced to printable ASCII (a newline, a CR or a Unicode
// line separator would end the comment and start a command).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace convguard {

enum class Shell { bash, fish, powershell };

// `s` as one single-quoted word that the shell reads back as exactly `s`:
//   bash (any POSIX sh): '...' with ' written '\'' (nothing else is special inside).
//   fish: '...' with \ and ' escaped by a backslash (fish's only escapes inside '...').
//   powershell: '...' with ' doubled; PowerShell also takes U+2018..U+201B as single quotes,
//     so those are doubled too.
std::string shell_quoted(std::string_view s, Shell shell = Shell::bash);

// `s` for a '#' comment line: every byte outside printable ASCII (controls, DEL, any non-ASCII
// byte, so also U+0085, U+2028, U+2029) becomes '?'.
std::string comment_text(std::string_view s);

// Whether `name` may be an environment variable's name in every supported shell:
// [A-Z_][A-Z0-9_]*.
bool is_env_name(std::string_view name);

// `s` as a number written with digits only (no sign, space, exponent or prefix) and at most
// `max`: how counts and indexes from outside (--shard I/N, --device cuda:N, Slurm's variables)
// are read; nullopt for anything else.
std::optional<long> digits_only(std::string_view s, long max);

// The last at most `max_bytes` of `s`, starting on a UTF-8 character boundary (a tail cut
// inside a multi-byte character would begin with stray continuation bytes).
std::string utf8_tail(std::string_view s, std::size_t max_bytes);

// `s` with every byte that does not start or continue a well-formed UTF-8 character (stray
// continuation bytes, overlong forms, surrogates, past U+10FFFF, cut-off sequences) replaced by
// U+FFFD: for stores that take only valid text (PostgreSQL refuses the whole row otherwise).
std::string valid_utf8(std::string_view s);

}  // namespace convguard
