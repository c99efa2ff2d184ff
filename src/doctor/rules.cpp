#include "doctor/rules.hpp"
#include "vendor/data_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>

#include "core/json_text.hpp"
#include "vendor/miopen_table.hpp"

namespace convguard::doctor {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "2.2.2+rocm5.7" -> {2, 2, 2}; "5.7.31921" -> {5, 7, 31921}.
std::vector<long> version_parts(const std::string& v) {
  std::vector<long> out;
  const std::string core = v.substr(0, v.find_first_of("+- "));
  std::size_t i = 0;
  while (i < core.size()) {
    std::size_t j = i;
    while (j < core.size() && std::isdigit(static_cast<unsigned char>(core[j]))) ++j;
    if (j == i) break;
    out.push_back(std::stol(core.substr(i, j - i)));
    if (j >= core.size() || core[j] != '.') break;
    i = j + 1;
  }
  return out;
}

int compare_versions(const std::string& a, const std::string& b) {
  const auto x = version_parts(a), y = version_parts(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const long p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

std::string major_minor(const std::string& v) {
  const auto p = version_parts(v);
  return p.size() >= 2 ? fmt::format("{}.{}", p[0], p[1]) : std::string();
}

// Flattened snapshot fields for one GPU (or none), with the derived fields.
using Fields = std::map<std::string, std::string>;

Fields fields_of(const Snapshot& s, const nlohmann::json* gpu) {
  Fields f;
  auto add = [&](const std::string& prefix, const nlohmann::json& obj) {
    if (!obj.is_object()) return;
    for (const auto& [k, v] : obj.items()) {
      if (v.is_string()) f[prefix + k] = v.get<std::string>();
      if (v.is_number()) f[prefix + k] = json_text(v);
    }
  };
  if (s.contains("versions")) add("versions.", s["versions"]);
  if (s.contains("env")) add("env.", s["env"]);
  if (s.contains("python")) add("python.", s["python"]);
  if (gpu) add("gpu.", *gpu);
  if (f.count("versions.rocm")) f["versions.rocm_minor"] = major_minor(f["versions.rocm"]);
  // The ROCm a torch build targets: "+rocm5.7" in its version, else torch.version.hip.
  if (f.count("python.torch")) {
    std::smatch m;
    const std::string tv = f["python.torch"];
    if (std::regex_search(tv, m, std::regex("\\+rocm([0-9]+\\.[0-9]+)"))) {
      f["torch.rocm"] = m[1];
    } else if (f.count("python.torch_hip")) {
      f["torch.rocm"] = major_minor(f["python.torch_hip"]);
    }
  }
  return f;
}

std::string fill(std::string text, const Fields& f) {  // "{gpu.arch}" -> its value
  for (const auto& [k, v] : f) {
    const std::string key = "{" + k + "}";
    for (std::size_t p; (p = text.find(key)) != std::string::npos;) text.replace(p, key.size(), v);
  }
  return text;
}

Result<bool> holds(const nlohmann::json& cond, const Fields& f, const std::string& rule,
                   std::string& unmet) {
  if (cond.is_object()) {
    const bool all = cond.contains("all");
    const auto& list = all ? cond["all"] : cond.contains("any") ? cond["any"] : nlohmann::json();
    if (!list.is_array())
      return invalid_argument("rule " + rule + ": a condition needs all or any");
    std::string first_unmet;
    for (const auto& c : list) {
      auto h = holds(c, f, rule, first_unmet);
      if (!h) return h;
      if (all && !*h) {
        unmet = first_unmet;
        return false;
      }
      if (!all && *h) return true;
    }
    if (!all) unmet = first_unmet;
    return all;
  }
  if (!cond.is_array() || cond.size() < 2 || !cond[0].is_string() || !cond[1].is_string())
    return invalid_argument("rule " + rule + ": a test is [FIELD, OP, VALUE]");
  const std::string field = cond[0], op = cond[1];
  // A value may name another field: ["torch.rocm", "ne", "{versions.rocm_minor}"].
  const std::string value =
      cond.size() > 2 && cond[2].is_string() ? fill(cond[2].get<std::string>(), f) : "";
  const auto it = f.find(field);
  const bool present = it != f.end() && !it->second.empty();
  bool ok = false;
  if (op == "present") {
    ok = present;
  } else if (op == "missing") {
    ok = !present;
  } else if (!present) {
    ok = false;
  } else if (op == "eq") {
    ok = it->second == value;
  } else if (op == "ne") {
    ok = it->second != value;
  } else if (op == "prefix") {
    ok = it->second.rfind(value, 0) == 0;
  } else if (op == "version_ge") {
    ok = compare_versions(it->second, value) >= 0;
  } else if (op == "version_lt") {
    ok = compare_versions(it->second, value) < 0;
  } else if (op == "bool_true") {
    const std::string v = lower(it->second);
    ok = v == "1" || v == "yes" || v == "true" || v == "on" || v == "enable" || v == "enabled";
  } else {
    return invalid_argument("rule " + rule + ": unknown operator '" + op + "'");
  }
  if (!ok) {
    unmet = present ? fmt::format("{} is {}", field, it->second)
                    : fmt::format("{} is not set/unknown", field);
  }
  return ok;
}

}  // namespace

const char* to_string(Severity s) {
  return s == Severity::fail ? "FAIL" : s == Severity::warn ? "WARN" : "PASS";
}

bool miopen_bool_valid(const std::string& value) {
  static const char* words[] = {"0",  "1",   "yes",    "no",      "true",    "false",
                                "on", "off", "enable", "enabled", "disable", "disabled"};
  const std::string v = lower(value);
  for (const char* w : words) {
    if (v == w) return true;
  }
  return false;
}

std::string default_rules_path() {
  return data_path("doctor/rules.json");
}

Result<nlohmann::json> load_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status{StatusCode::io_error, path + ": cannot read the doctor's rules"};
  try {
    nlohmann::json j = nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true);
    if (!j.is_object() || !j.contains("rules") || !j["rules"].is_array())
      return invalid_argument(path + ": expected {\"rules\": [...]}");
    return j;
  } catch (const std::exception& e) {
    return invalid_argument(path + ": not JSON: " + e.what());
  }
}

Result<std::vector<Finding>> check_rules(const nlohmann::json& rules, const Snapshot& s) {
  std::vector<Finding> out;
  std::vector<const nlohmann::json*> gpus;
  if (s.contains("gpus") && s["gpus"].is_array()) {
    for (const auto& g : s["gpus"]) gpus.push_back(&g);
  }
  for (const auto& r : rules["rules"]) {
    const std::string id = r.value("id", std::string("?"));
    Finding best{r.value("check", id), Severity::pass, "", r.value("fix", std::string()),
                 r.value("source", std::string())};
    const std::string sev = r.value("severity", std::string());
    if (sev != "WARN" && sev != "FAIL")
      return invalid_argument("rule " + id + ": severity must be WARN or FAIL");
    // Rules on gpu.* fields hold for some GPU; the others are about the system.
    const bool per_gpu = json_text(r["when"]).find("\"gpu.") != std::string::npos;
    std::vector<const nlohmann::json*> targets =
        per_gpu ? gpus : std::vector<const nlohmann::json*>{nullptr};
    std::string unmet = per_gpu && gpus.empty() ? "no GPU found" : "";
    for (const nlohmann::json* g : targets) {
      const Fields f = fields_of(s, g);
      auto h = holds(r["when"], f, id, unmet);
      if (!h) return h.status();
      if (*h) {
        best.status = sev == "FAIL" ? Severity::fail : Severity::warn;
        best.finding = fill(r.value("message", std::string()), f);
        best.fix = fill(best.fix, f);
        break;
      }
    }
    if (best.status == Severity::pass) best.finding = "does not apply: " + unmet;
    out.push_back(best);
  }
  // MIOpen's boolean switches: any value outside its word list makes MIOpen throw.
  auto table = miopen_table::load();
  Finding sw{"MIOpen switch values", Severity::pass, "", "",
             "MIOpen src/env.cpp (boolean "
             "environment values); seed 003 set switches by hand"};
  std::string bad;
  if (table && s.contains("env") && s["env"].is_object()) {
    for (const auto& [name, v] : s["env"].items()) {
      bool boolean = false;
      for (const auto& [fam, fsw] : table->family_switch) boolean = boolean || fsw == name;
      for (const auto& t : table->solvers) boolean = boolean || t.switch_name == name;
      if (boolean && v.is_string() && !miopen_bool_valid(v.get<std::string>()))
        bad += fmt::format("{}{}='{}'", bad.empty() ? "" : ", ", name, v.get<std::string>());
    }
  }
  if (!bad.empty()) {
    sw.status = Severity::fail;
    sw.finding = "MIOpen throws on these boolean switches: " + bad;
    sw.fix =
        "set each to 0 or 1 (MIOpen accepts 0/1, yes/no, true/false, on/off, "
        "enable(d)/disable(d))";
  } else {
    sw.finding = table ? "every MIOPEN_DEBUG_* switch set has a value MIOpen accepts"
                       : "not checked: " + table.status().message();
  }
  out.push_back(sw);
  return out;
}

}  // namespace convguard::doctor
