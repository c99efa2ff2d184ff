// The doctor's checks: data/doctor/rules.json (the seeds' version lore, as data) plus the checks
// that need code (MIOpen's boolean switches, the probe database's evidence).
//
// A rule: {"id", "check", "severity": "WARN"|"FAIL", "when": CONDITION, "message", "fix",
// "source"}. CONDITION is {"all": [...]} or {"any": [...]} of conditions or of
// [FIELD, OP, VALUE] triples. FIELD names a snapshot value: "gpu.arch" (evaluated once per GPU),
// "versions.rocm", "env.HSA_OVERRIDE_GFX_VERSION", "python.torch", and the derived "torch.rocm"
// (the ROCm version a torch build targets, from "+rocm5.7" or torch.version.hip) and
// "versions.rocm_minor" ("5.7"). OP: eq, ne, prefix, version_ge, version_lt, present, missing,
// bool_true (a MIOpen-style true: 1/yes/true/on/enable(d)). A rule fires when its condition
// holds; a condition on a missing field is false (except `missing`).
#pragma once

#include <string>
#include <vector>

#include "convguard/status.hpp"
#include "doctor/snapshot.hpp"

namespace convguard::doctor {

enum class Severity { pass, warn, fail };
const char* to_string(Severity s);

struct Finding {
  std::string check;  // what was checked ("gfx1010 on ROCm 6+")
  Severity status = Severity::pass;
  std::string finding, fix, source;
};

// data/doctor/rules.json ($CONVGUARD_DATA_DIR or the source tree).
std::string default_rules_path();
[[nodiscard]] Result<nlohmann::json> load_rules(const std::string& path);
// Checks the snapshot against every rule (one finding each, PASS when it does not fire) and the
// built-in MIOpen switch-value check. Rule-file errors come back as a Status naming the rule.
[[nodiscard]] Result<std::vector<Finding>> check_rules(const nlohmann::json& rules,
                                                       const Snapshot& s);

// MIOpen compares boolean switches against a fixed set of words and throws on anything else.
bool miopen_bool_valid(const std::string& value);

}  // namespace convguard::doctor
