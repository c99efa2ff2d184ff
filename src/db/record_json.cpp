#include "db/record_json.hpp"

#include "core/json_text.hpp"
#include "db/fields.hpp"

namespace convguard::db {

nlohmann::json to_json(const TrialRecord& t) {
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
          {"command", t.command},
          {"compile_ms", t.compile_ms},
          {"compile_deadline_ms", t.compile_deadline_ms}};
}

Result<TrialRecord> from_json(const nlohmann::json& j) {
  if (!j.is_object()) return invalid_argument("not a JSON object");
  TrialRecord t;
  try {
    json_field(j, "device", t.device, true);
    json_field(j, "device_description", t.device_description);
    json_field(j, "problem", t.problem, true);
    json_field(j, "solver", t.solver, true);
    json_field(j, "status", t.status, true);
    json_field(j, "reason", t.reason);
    json_field(j, "first_ms", t.first_ms);
    json_field(j, "median_ms", t.median_ms);
    json_field(j, "min_ms", t.min_ms);
    json_field(j, "runs", t.runs);
    json_field(j, "workspace_bytes", t.workspace_bytes);
    json_field(j, "peak_rss_bytes", t.peak_rss_bytes);
    json_field(j, "rel_error", t.rel_error);
    json_field(j, "max_abs_error", t.max_abs_error);
    json_field(j, "tolerance", t.tolerance);
    json_field(j, "signal", t.signal);
    json_field(j, "exit_code", t.exit_code);
    json_field(j, "stderr_tail", t.stderr_tail);
    json_field(j, "deadline_ms", t.deadline_ms);
    json_field(j, "started_at", t.started_at);
    json_field(j, "finished_at", t.finished_at, true);
    json_field(j, "command", t.command);
    json_field(j, "compile_ms", t.compile_ms);
    json_field(j, "compile_deadline_ms", t.compile_deadline_ms);
  } catch (const std::exception& e) {
    return invalid_argument(e.what());
  }
  // The checks every stored record passes (db/fields.hpp), here so the message can name the
  // line; the store checks again inside its transaction.
  if (auto st = check_record(t, Origin::import); !st) return st;
  return t;
}

}  // namespace convguard::db
