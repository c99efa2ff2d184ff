// convguard db show|check|export|import|merge|clear: read, move and merge the results database.
// export writes JSON lines (one trial each, with its device); import/merge read them and never
// overwrite newer evidence silently (they say how many rows they kept).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "db/store.hpp"
#include "flags.hpp"

namespace convguard::cli {
namespace {

nlohmann::json to_json(const db::TrialRecord& t) {
  return {{"device", t.device},
          {"device_description", t.device_description},
          {"problem", t.problem},
          {"solver", t.solver},
          {"status", t.status},
          {"reason", t.reason},
          {"first_ms", t.first_ms},
          {"median_ms", t.median_ms},
          {"min_ms", t.min_ms},
          {"runs", t.runs},
          {"workspace_bytes", t.workspace_bytes},
          {"peak_rss_bytes", t.peak_rss_bytes},
          {"rel_error", t.rel_error},
          {"max_abs_error", t.max_abs_error},
          {"tolerance", t.tolerance},
          {"signal", t.signal},
          {"exit_code", t.exit_code},
          {"stderr_tail", t.stderr_tail},
          {"deadline_ms", t.deadline_ms},
          {"started_at", t.started_at},
          {"finished_at", t.finished_at},
          {"command", t.command}};
}

db::TrialRecord from_json(const nlohmann::json& j) {
  db::TrialRecord t;
  t.device = j.at("device").get<std::string>();
  t.device_description = j.value("device_description", std::string());
  t.problem = j.at("problem").get<std::string>();
  t.solver = j.at("solver").get<std::string>();
  t.status = j.at("status").get<std::string>();
  t.reason = j.value("reason", std::string());
  t.first_ms = j.value("first_ms", 0.0);
  t.median_ms = j.value("median_ms", 0.0);
  t.min_ms = j.value("min_ms", 0.0);
  t.runs = j.value("runs", 0);
  t.workspace_bytes = j.value("workspace_bytes", std::int64_t{0});
  t.peak_rss_bytes = j.value("peak_rss_bytes", std::int64_t{0});
  t.rel_error = j.value("rel_error", 0.0);
  t.max_abs_error = j.value("max_abs_error", 0.0);
  t.tolerance = j.value("tolerance", 0.0);
  t.signal = j.value("signal", 0);
  t.exit_code = j.value("exit_code", -1);
  t.stderr_tail = j.value("stderr_tail", std::string());
  t.deadline_ms = j.value("deadline_ms", 0.0);
  t.started_at = j.value("started_at", std::string());
  t.finished_at = j.at("finished_at").get<std::string>();
  t.command = j.value("command", std::string());
  return t;
}

int import_files(db::Store& store, const std::vector<std::string>& files) {
  int imported = 0, kept = 0;
  for (const auto& path : files) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "convguard db: %s: cannot open\n", path.c_str());
      return 2;
    }
    int lineno = 0;
    for (std::string line; std::getline(in, line);) {
      ++lineno;
      if (line.empty()) continue;
      db::TrialRecord r;
      try {
        r = from_json(nlohmann::json::parse(line));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "convguard db: %s:%d: not a trial record: %s\n", path.c_str(), lineno,
                     e.what());
        return 2;
      }
      auto ok = store.import_record(r);
      if (!ok) {
        std::fprintf(stderr, "convguard db: %s\n", ok.status().message().c_str());
        return 1;
      }
      (*ok ? imported : kept)++;
    }
  }
  std::printf("imported %d trial(s); kept %d where this database has the same or newer evidence\n",
              imported, kept);
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
  for (const auto& t : (*store)->all()) {
    if (cmd == "export" || f.on("json")) {
      std::printf("%s\n", to_json(t).dump().c_str());
    } else {
      std::printf("%-26s %-11s %10.3f  %s  %s\n", t.solver.c_str(), t.status.c_str(), t.median_ms,
                  t.problem.c_str(), t.reason.c_str());
    }
  }
  return 0;
}

}  // namespace convguard::cli
