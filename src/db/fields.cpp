#include "db/fields.hpp"

#include <fmt/format.h>

#include <ctime>

#include "convguard/canonical.hpp"
#include "core/safe_text.hpp"
#include "db/store.hpp"

namespace convguard::db {
namespace {

bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil), so the
// check needs neither timegm nor the TZ environment.
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

Result<std::string> canonical_problem_key(std::string_view text) {
  auto p = parse_problem(text);
  if (!p) return p.status();
  return identity_string(*p);
}

std::string now_timestamp() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Status check_timestamp(std::string_view t) {
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:ddZ";
  const auto bad = [&](std::string_view why) {
    return invalid_argument(fmt::format("'{}' {}", comment_text(t), why));
  };
  bool shaped = t.size() == kShape.size();
  for (std::size_t i = 0; shaped && i < kShape.size(); ++i)
    shaped = kShape[i] == 'd' ? (t[i] >= '0' && t[i] <= '9') : t[i] == kShape[i];
  if (!shaped) return bad("is not a timestamp (want YYYY-MM-DDTHH:MM:SSZ, UTC)");
  const auto num = [&](std::size_t at, std::size_t n) {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) v = v * 10 + (t[i] - '0');
    return v;
  };
  const int year = num(0, 4), month = num(5, 2), day = num(8, 2);
  const int hour = num(11, 2), minute = num(14, 2), second = num(17, 2);
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12) return bad("has no such month");
  if (day < 1 || day > kDays[month - 1] + (month == 2 && leap)) return bad("has no such day");
  if (hour > 23 || minute > 59 || second > 59) return bad("has no such time of day");
  const std::int64_t secs =
      days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  if (secs > static_cast<std::int64_t>(std::time(nullptr)) + kClockSkewSeconds)
    return bad(fmt::format("is in the future (this machine's clock says {})", now_timestamp()));
  return Status::ok();
}

Status check_record(TrialRecord& r, Origin origin) {
  const std::pair<const char*, const std::string*> texts[] = {
      {"device", &r.device},           {"device_description", &r.device_description},
      {"problem", &r.problem},         {"solver", &r.solver},
      {"status", &r.status},           {"reason", &r.reason},
      {"stderr_tail", &r.stderr_tail}, {"started_at", &r.started_at},
      {"finished_at", &r.finished_at}, {"command", &r.command}};
  for (const auto& [name, text] : texts) {
    if (has_nul(*text)) return invalid_argument(fmt::format("{}: contains a NUL character", name));
  }
  if (r.device.empty()) return invalid_argument("device: empty");
  for (char c : r.device) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return invalid_argument("device: contains a control character");
  }
  static constexpr std::string_view kStatuses[] = {
      "running", "ok",          "wrong",   "hang",        "crash",          "error",
      "oom",     "unsupported", "skipped", "interrupted", "compile_timeout"};
  bool known = false;
  for (auto s : kStatuses) known = known || r.status == s;
  if (!known)
    return invalid_argument(
        fmt::format("status: '{}' is not a trial status", comment_text(r.status)));
  if (auto st = check_solver_id(r.solver); !st) return invalid_argument("solver: " + st.message());
  auto key = canonical_problem_key(r.problem);
  if (!key)
    return invalid_argument(
        fmt::format("problem: '{}': {}", comment_text(r.problem), key.status().message()));
  r.problem = std::move(*key);
  if (origin == Origin::import && r.finished_at.empty())
    return invalid_argument("finished_at: missing");
  if (!r.started_at.empty()) {
    if (auto st = check_timestamp(r.started_at); !st)
      return invalid_argument("started_at: " + st.message());
  }
  if (!r.finished_at.empty()) {
    if (auto st = check_timestamp(r.finished_at); !st)
      return invalid_argument("finished_at: " + st.message());
    // Same format, so the strings compare as times.
    if (!r.started_at.empty() && r.finished_at < r.started_at)
      return invalid_argument(
          fmt::format("finished_at: {} is before started_at {}", r.finished_at, r.started_at));
  }
  return Status::ok();
}

}  // namespace convguard::db
