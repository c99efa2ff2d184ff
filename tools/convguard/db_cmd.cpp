// convguard db show|check: read the results database.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "db/store.hpp"
#include "flags.hpp"

namespace convguard::cli {

int db_main(int argc, char** argv) {
  Flags f({{0, "db", "",
            "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
           {0, "json", "", "JSON lines", true},
           {'h', "help", "", "print this help", true}});
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard db: %s\n", st.message().c_str());
    return 2;
  }
  const auto& pos = f.positional();
  if (f.on("help") || pos.size() != 1 || (pos[0] != "show" && pos[0] != "check")) {
    std::fprintf(f.on("help") ? stdout : stderr,
                 "usage: convguard db show|check [--db PATH] [--json]\n%s", f.usage().c_str());
    return f.on("help") ? 0 : 2;
  }
  const std::string path = f.given("db") ? f.str("db") : db::default_path();
  auto store = db::Store::open(path);
  if (!store) {
    std::fprintf(stderr, "convguard db: %s\n", store.status().message().c_str());
    return 2;
  }
  if (pos[0] == "check") {
    auto r = (*store)->integrity_check();
    if (!r) {
      std::fprintf(stderr, "convguard db: %s\n", r.status().message().c_str());
      return 1;
    }
    std::printf("%s\n", r->c_str());
    return *r == "ok" ? 0 : 1;
  }
  for (const auto& t : (*store)->all()) {
    if (f.on("json")) {
      std::printf("%s\n", nlohmann::json{{"device", t.device},
                                         {"problem", t.problem},
                                         {"solver", t.solver},
                                         {"status", t.status},
                                         {"reason", t.reason},
                                         {"first_ms", t.first_ms},
                                         {"median_ms", t.median_ms},
                                         {"min_ms", t.min_ms},
                                         {"runs", t.runs},
                                         {"workspace_bytes", t.workspace_bytes},
                                         {"rel_error", t.rel_error},
                                         {"tolerance", t.tolerance},
                                         {"signal", t.signal},
                                         {"exit_code", t.exit_code},
                                         {"stderr_tail", t.stderr_tail},
                                         {"deadline_ms", t.deadline_ms},
                                         {"started_at", t.started_at},
                                         {"finished_at", t.finished_at},
                                         {"command", t.command}}
                              .dump()
                              .c_str());
    } else {
      std::printf("%-26s %-11s %10.3f  %s  %s\n", t.solver.c_str(), t.status.c_str(), t.median_ms,
                  t.problem.c_str(), t.reason.c_str());
    }
  }
  return 0;
}

}  // namespace convguard::cli
