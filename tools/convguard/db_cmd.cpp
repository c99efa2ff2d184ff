// convguard db show|check|export|import|merge|clear: read, move and merge the results database.
// export writes JSON lines (one trial each, with its device); import/merge read them and never
// overwrite newer evidence silently (they say how many rows they kept and each row they
// replaced). An import is evidence from elsewhere: every line is checked by the database's
// grammar (db/fields.hpp) and the whole import is one transaction, so one bad line imports
// nothing.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/json_text.hpp"
#include "core/safe_text.hpp"
#include "db/fields.hpp"
#include "db/record_json.hpp"
#include "db/store.hpp"
#include "flags.hpp"

namespace convguard::cli {
namespace {

using db::from_json;
using db::to_json;

// The next line of `in` into `line`, refusing one longer than kMaxLine: a file with no newline
// (a device, a huge blob) must be an error, not unbounded memory.
constexpr std::size_t kMaxLine = std::size_t{1} << 20;
enum class LineRead { line, end, too_long };
LineRead read_line(std::istream& in, std::string& line) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) return line.empty() ? LineRead::end : LineRead::line;
    if (c == '\n') return LineRead::line;
    if (line.size() >= kMaxLine) return LineRead::too_long;
    line.push_back(static_cast<char>(c));
  }
}

// Reads every file, checks every line, then imports all of it in one transaction: any bad line
// means nothing is imported.
int import_files(db::Store& store, const std::vector<std::string>& files) {
  std::vector<db::TrialRecord> records;
  for (const auto& path : files) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::fprintf(stderr, "convguard db: %s: is a directory, not a JSON-lines file\n",
                   comment_text(path).c_str());
      return 2;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "convguard db: %s: cannot open\n", comment_text(path).c_str());
      return 2;
    }
    int lineno = 0;
    for (std::string line;;) {
      const LineRead got = read_line(in, line);
      if (got == LineRead::end) break;
      ++lineno;
      const std::string where = fmt::format("{}:{}", comment_text(path), lineno);
      if (got == LineRead::too_long) {
        std::fprintf(stderr, "convguard db: %s: line longer than %zu bytes; nothing imported\n",
                     where.c_str(), kMaxLine);
        return 2;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      Result<db::TrialRecord> r = invalid_argument("");
      try {
        r = from_json(nlohmann::json::parse(line));
      } catch (const std::exception& e) {
        r = invalid_argument(std::string("not JSON: ") + e.what());
      }
      if (!r) {
        std::fprintf(stderr, "convguard db: %s: %s; nothing imported\n", where.c_str(),
                     comment_text(r.status().message()).c_str());
        return 2;
      }
      records.push_back(std::move(*r));
    }
    if (in.bad()) {
      std::fprintf(stderr, "convguard db: %s: read error; nothing imported\n",
                   comment_text(path).c_str());
      return 2;
    }
  }
  auto out = store.import_records(std::move(records));
  if (!out) {
    std::fprintf(stderr, "convguard db: %s; nothing imported\n",
                 comment_text(out.status().message()).c_str());
    return 1;
  }
  for (const auto& r : out->replaced) {
    std::printf("replaced: %s | %s | %s: %s -> %s\n", comment_text(r.device).c_str(),
                r.problem.c_str(), r.solver.c_str(), r.old_status.c_str(), r.new_status.c_str());
  }
  std::printf(
      "imported %d trial(s); kept %d where this database has the same or newer evidence; %zu "
      "imported row(s) replaced older ones\n",
      out->imported, out->kept, out->replaced.size());
  return 0;
}

}  // namespace

int db_main(int argc, char** argv) {
  Flags f({{0, "db", "",
            "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
           {0, "json", "", "show: JSON lines", true},
           {0, "yes", "", "clear: really delete every trial", true},
           {'h', "help", "", "print this help", true}});
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard db: %s\n", st.message().c_str());
    return 2;
  }
  const auto& pos = f.positional();
  const std::string cmd = pos.empty() ? "" : pos[0];
  const bool known = cmd == "show" || cmd == "check" || cmd == "export" || cmd == "import" ||
                     cmd == "merge" || cmd == "clear";
  if (f.on("help") || !known) {
    std::fprintf(f.on("help") ? stdout : stderr,
                 "usage: convguard db show [--json] | check | export | import FILE... | merge "
                 "FILE... | clear --yes"
                 "  [--db PATH]\n%s",
                 f.usage().c_str());
    return f.on("help") ? 0 : 2;
  }
  if ((cmd == "import" || cmd == "merge") && pos.size() < 2) {
    std::fprintf(
        stderr, "convguard db %s: give the JSON-lines file(s) to read (from convguard db export)\n",
        cmd.c_str());
    return 2;
  }
  if (cmd != "import" && cmd != "merge" && pos.size() > 1) {
    std::fprintf(stderr, "convguard db %s: unexpected argument '%s'\n", cmd.c_str(),
                 pos[1].c_str());
    return 2;
  }
  const std::string path = f.given("db") ? f.str("db") : db::default_path();
  auto store = db::Store::open(path);
  if (!store) {
    std::fprintf(stderr, "convguard db: %s\n", store.status().message().c_str());
    return 2;
  }
  if (cmd == "check") {
    auto r = (*store)->integrity_check();
    if (!r) {
      std::fprintf(stderr, "convguard db: %s\n", r.status().message().c_str());
      return 1;
    }
    std::printf("%s\n", r->c_str());
    return *r == "ok" ? 0 : 1;
  }
  if (cmd == "import" || cmd == "merge" || cmd == "clear") {
    // Writers take the probe's lock: never while a probe writes.
    if (auto st = (*store)->lock_for_writing(); !st) {
      std::fprintf(stderr, "convguard db: %s\n", st.message().c_str());
      return 3;
    }
  }
  if (cmd == "import" || cmd == "merge") return import_files(**store, {pos.begin() + 1, pos.end()});
  if (cmd == "clear") {
    if (!f.on("yes")) {
      std::fprintf(stderr,
                   "convguard db clear: deletes every trial in %s; add --yes (export first to keep "
                   "a copy)\n",
                   path.c_str());
      return 2;
    }
    auto n = (*store)->clear();
    if (!n) {
      std::fprintf(stderr, "convguard db: %s\n", n.status().message().c_str());
      return 1;
    }
    std::printf("cleared %s\n", path.c_str());
    return 0;
  }
  std::string device;
  const auto rows = (*store)->all();
  if (auto st = (*store)->read_failure(); !st) {
    std::fprintf(stderr, "convguard db: %s\n", st.message().c_str());
    return 1;
  }
  for (const auto& t : rows) {
    if (cmd == "export" || f.on("json")) {
      std::printf("%s\n", json_text(to_json(t)).c_str());
      continue;
    }
    // Each device's description once, above its trials: it says what they ran on and under
    // (MIOpen's: the MIOPEN_* set its workers had).
    if (t.device != device) {
      device = t.device;
      std::printf("device: %s\n",
                  t.device_description.empty() ? t.device.c_str() : t.device_description.c_str());
    }
    const std::string compile =
        t.compile_ms >= 0.5 ? fmt::format(" (compile step {:.0f} ms)", t.compile_ms) : "";
    std::printf("%-26s %-11s %10.3f  %s  %s%s\n", t.solver.c_str(), t.status.c_str(), t.median_ms,
                t.problem.c_str(), t.reason.c_str(), compile.c_str());
  }
  return 0;
}

}  // namespace convguard::cli
