// convguard report --html FILE: one self-contained HTML page (no network, no scripts) from the
// results database: a status heatmap (problems x solvers), time bars per problem, per-solver
// totals, and every failure with its reason, the worker's stderr tail and the reproduce command.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "commands.hpp"
#include "db/store.hpp"
#include "flags.hpp"
#include "probe/device.hpp"

namespace convguard::cli {
namespace {

std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      default:
        r += c;
    }
  }
  return r;
}

const char* colour(const std::string& status) {
  if (status == "ok") return "#3a9d5d";
  if (status == "wrong") return "#d98c1f";
  if (status == "hang") return "#b02a2a";
  if (status == "crash") return "#6d1f8a";
  if (status == "error") return "#c0568a";
  if (status == "oom") return "#8a5a2b";
  if (status == "running" || status == "interrupted" || status == "compile_timeout")
    return "#2b6cb0";  // not evidence against the solver: retried by the next probe
  return "#d0d0d0";    // unsupported, skipped
}

const char* kStatuses[] = {"ok",      "wrong",       "hang",           "crash",
                           "error",   "oom",         "unsupported",    "skipped",
                           "running", "interrupted", "compile_timeout"};

}  // namespace

int report_main(int argc, char** argv) {
  Flags f({{0, "html", "", "write the report to this file"},
           {0, "db", "",
            "results database (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
           {0, "device", "this", "this (this machine's evidence) or all"},
           {'h', "help", "", "print this help", true}});
  if (auto st = f.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard report: %s\n", st.message().c_str());
    return 2;
  }
  if (f.on("help")) {
    std::printf("usage: convguard report --html FILE [--db PATH] [--device this|all]\n%s",
                f.usage().c_str());
    return 0;
  }
  if (!f.given("html") || f.str("html").empty()) {
    std::fprintf(stderr, "convguard report: --html FILE is required\n");
    return 2;
  }
  const std::string device = f.str("device");
  if (device != "this" && device != "all") {
    std::fprintf(stderr, "convguard report: --device: '%s' is not this or all\n", device.c_str());
    return 2;
  }
  auto store = db::Store::open(f.given("db") ? f.str("db") : db::default_path());
  if (!store) {
    std::fprintf(stderr, "convguard report: %s\n", store.status().message().c_str());
    return 2;
  }
  const auto trials = (*store)->all(device == "this" ? probe::cpu_device().fingerprint : "");
  if (auto st = (*store)->read_failure(); !st) {
    std::fprintf(stderr, "convguard report: %s\n", st.message().c_str());
    return 1;
  }
  std::vector<std::string> problems, solvers;
  std::set<std::string> pseen, sseen;
  std::map<std::pair<std::string, std::string>, const db::TrialRecord*> cell;
  std::map<std::string, std::map<std::string, int>> per_solver;
  for (const auto& t : trials) {
    if (pseen.insert(t.problem).second) problems.push_back(t.problem);
    if (sseen.insert(t.solver).second) solvers.push_back(t.solver);
    cell[{t.problem, t.solver}] = &t;
    ++per_solver[t.solver][t.status];
  }
  std::sort(solvers.begin(), solvers.end());
  std::string h;
  h += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>convguard "
       "report</title><style>"
       "body{font:14px "
       "sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:12px 0}"
       "td,th{border:1px solid #ccc;padding:3px "
       "6px;font-size:12px}th.s{writing-mode:vertical-rl;transform:rotate(180deg)}"
       "td.c{width:18px;height:18px;padding:0}.legend span{display:inline-block;padding:2px "
       "8px;margin:2px;color:#fff}"
       "pre{background:#f4f4f4;padding:6px;white-space:pre-wrap;max-height:200px;overflow:auto}"
       "code{font-size:12px}"
       "</style></head><body>\n";
  h += fmt::format(
      "<h1>convguard report</h1><p>{} trials, {} problems, {} solvers; database {} ({})</p>\n",
      trials.size(), problems.size(), solvers.size(), esc((*store)->path()),
      device == "this" ? esc(probe::cpu_device().description) : "all devices");
  h += "<div class=\"legend\">";
  for (const char* s : kStatuses)
    h += fmt::format("<span style=\"background:{}\">{}</span>", colour(s), s);
  h += "</div>\n<h2>Status by problem and solver</h2><table class=\"heatmap\"><tr><th>problem</th>";
  for (const auto& s : solvers) h += "<th class=\"s\">" + esc(s) + "</th>";
  h += "</tr>\n";
  for (const auto& p : problems) {
    h += "<tr><td><code>" + esc(p) + "</code></td>";
    for (const auto& s : solvers) {
      const auto it = cell.find({p, s});
      const std::string st = it == cell.end() ? "" : it->second->status;
      const std::string tip =
          it == cell.end() ? "not tried"
                           : st + (st == "ok" ? fmt::format(": {:.3f} ms", it->second->median_ms)
                                              : ": " + it->second->reason);
      h += fmt::format(
          "<td class=\"c\" data-status=\"{}\" style=\"background:{}\" title=\"{}\"></td>", esc(st),
          it == cell.end() ? "#fff" : colour(st), esc(s + " - " + tip));
    }
    h += "</tr>\n";
  }
  h += "</table>\n<h2>Times (median ms of verified solvers)</h2>\n";
  for (const auto& p : problems) {
    std::vector<std::pair<std::string, double>> ok;
    for (const auto& s : solvers) {
      const auto it = cell.find({p, s});
      if (it != cell.end() && it->second->status == "ok") ok.emplace_back(s, it->second->median_ms);
    }
    if (ok.empty()) continue;
    double worst = 0;
    for (const auto& [s, ms] : ok) worst = std::max(worst, ms);
    const int height = 18 * static_cast<int>(ok.size()) + 6;
    h += "<p><code>" + esc(p) + "</code></p>" +
         fmt::format("<svg class=\"chart\" width=\"720\" height=\"{}\" role=\"img\">", height);
    int y = 3;
    for (const auto& [s, ms] : ok) {
      const double w = worst > 0 ? 420.0 * ms / worst : 0;
      h += fmt::format(
          "<text x=\"0\" y=\"{}\" font-size=\"11\">{}</text><rect x=\"200\" y=\"{}\" "
          "width=\"{:.1f}\" "
          "height=\"14\" fill=\"#3a9d5d\"></rect><text x=\"{:.1f}\" y=\"{}\" "
          "font-size=\"11\">{:.3f} ms</text>",
          y + 11, esc(s), y, std::max(1.0, w), 205 + w, y + 11, ms);
      y += 18;
    }
    h += "</svg>\n";
  }
  h += "<h2>Per solver</h2><table class=\"solvers\"><tr><th>solver</th>";
  for (const char* s : kStatuses) h += fmt::format("<th>{}</th>", s);
  h += "</tr>\n";
  for (const auto& s : solvers) {
    h += "<tr><td>" + esc(s) + "</td>";
    for (const char* st : kStatuses) {
      const auto it = per_solver[s].find(st);
      h += fmt::format("<td>{}</td>", it == per_solver[s].end() ? 0 : it->second);
    }
    h += "</tr>\n";
  }
  h += "</table>\n<h2>Failures</h2>\n";
  int failures = 0;
  for (const auto& t : trials) {
    if (t.status != "wrong" && t.status != "hang" && t.status != "crash" && t.status != "error" &&
        t.status != "oom") {
      continue;
    }
    ++failures;
    h += fmt::format(
        "<div class=\"failure\"><h3><span style=\"color:{}\">{}</span> {} on <code>{}</code></h3>"
        "<p>{}</p>",
        colour(t.status), esc(t.status), esc(t.solver), esc(t.problem), esc(t.reason));
    if (!t.stderr_tail.empty()) h += "<pre>" + esc(t.stderr_tail) + "</pre>";
    h += "<p>reproduce: <code>" + esc(t.command) + "</code></p></div>\n";
  }
  if (failures == 0) h += "<p>none</p>\n";
  h += "</body></html>\n";
  std::ofstream out(f.str("html"));
  if (!out || !(out << h)) {
    std::fprintf(stderr, "convguard report: --html %s: cannot write\n", f.str("html").c_str());
    return 2;
  }
  std::printf("wrote %s: %zu trials, %zu problems, %zu solvers, %d failures\n",
              f.str("html").c_str(), trials.size(), problems.size(), solvers.size(), failures);
  return 0;
}

}  // namespace convguard::cli
